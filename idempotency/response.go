package idempotency

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// A stored response is the Value of the middleware's records:
//
//	version (1) | status (uvarint) | header count (uvarint)
//	| per header: name (uvarint length, bytes), value count (uvarint),
//	  values (uvarint length, bytes each) | body (to the end)
const responseVersion = 1

type storedResponse struct {
	status int
	header http.Header
	body   []byte
}

// encodeResponse returns the stored form of a response, without the header
// fields in unstored (by canonical name), whether sent as header fields or
// as trailers (named with http.TrailerPrefix).
func encodeResponse(status int, h http.Header, body []byte, unstored map[string]bool) []byte {
	b := []byte{responseVersion}
	b = binary.AppendUvarint(b, uint64(status))
	names := make([]string, 0, len(h))
	for name := range h {
		if storable(name, unstored) {
			names = append(names, name)
		}
	}
	slices.Sort(names) // the same response always encodes the same way
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, name := range names {
		b = appendString(b, name)
		b = binary.AppendUvarint(b, uint64(len(h[name])))
		for _, v := range h[name] {
			b = appendString(b, v)
		}
	}
	return append(b, body...)
}

// storable reports whether a record may keep the field name: a header
// field, or a trailer named with http.TrailerPrefix, that is not in
// unstored. A trailer is a field like any other: Set-Cookie is no more
// replayed at the end of a response than at its start.
func storable(name string, unstored map[string]bool) bool {
	name, _ = strings.CutPrefix(name, http.TrailerPrefix)
	return name != "" && !unstored[http.CanonicalHeaderKey(name)]
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

var errBadResponse = errors.New("corrupt stored response")

// decodeResponse reads a stored response. It rejects anything that
// encodeResponse cannot have written, without panicking and without
// allocating more than the input's size.
func decodeResponse(b []byte) (storedResponse, error) {
	d := decoder{b: b}
	if v := d.byte(); v != responseVersion {
		return storedResponse{}, fmt.Errorf("%w: version %d", errBadResponse, v)
	}
	r := storedResponse{status: int(d.uvarint(999))}
	if r.status < 100 {
		d.err = errBadResponse
	}
	n := d.count()
	r.header = make(http.Header, n)
	for range n {
		name := d.string()
		values := make([]string, d.count())
		for j := range values {
			values[j] = d.string()
		}
		r.header[name] = values
	}
	if d.err != nil {
		return storedResponse{}, fmt.Errorf("%w: %v", errBadResponse, d.err)
	}
	r.body = d.b
	return r, nil
}

// decoder reads from b until the first error, after which every read
// returns a zero value.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint(max uint64) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > max {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a number of items, each of which takes at least one byte.
func (d *decoder) count() int { return int(d.uvarint(uint64(len(d.b)))) }

func (d *decoder) string() string {
	n := d.uvarint(uint64(len(d.b)))
	if d.err != nil || uint64(len(d.b)) < n {
		d.fail()
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errors.New("truncated or out of range")
	}
}
