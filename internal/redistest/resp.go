package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// Do sends one command to the server at addr on a connection of its own and
// returns its reply: a string (simple or bulk), an int64, nil (a null), a
// []any (an array) or the server's error as an error. It waits at most 5s.
func Do(addr string, args ...string) (any, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := conn.Write([]byte(b.String())); err != nil {
		return nil, err
	}
	return readReply(bufio.NewReader(conn))
}

// readReply reads one RESP2 reply.
func readReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, errors.New("redistest: empty reply line")
	}
	body := line[1:]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return nil, errors.New(body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		return readBulk(r, body)
	case '*':
		return readArray(r, body)
	}
	return nil, fmt.Errorf("redistest: unexpected reply %q", line)
}

func readBulk(r *bufio.Reader, size string) (any, error) {
	n, err := strconv.Atoi(size)
	if err != nil || n < 0 {
		return nil, err
	}
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return string(buf[:n]), nil
}

func readArray(r *bufio.Reader, size string) (any, error) {
	n, err := strconv.Atoi(size)
	if err != nil || n < 0 {
		return nil, err
	}
	out := make([]any, n)
	for i := range out {
		if out[i], err = readReply(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// text is Do for a command whose reply is text (a status or a bulk string).
func text(addr string, args ...string) (string, error) {
	v, err := Do(addr, args...)
	if err != nil {
		return "", err
	}
	s, _ := v.(string)
	return s, nil
}
