// Command testsummary runs go test with -json and prints what a person
// reads of plain go test — each package's result line, and the output of
// the tests that failed — and remembers every test that skipped, with its
// message, so that `make test` can end with the list: a missing
// redis-server shows as the tests it skipped, not as silence.
//
//	testsummary -record FILE go test -race -count=1 ./...   # in a module; exit status: go test's
//	testsummary -report FILE                                # every skip recorded, and the counts
//
// The report's last line is "tests: N passed, N failed, N skipped".
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
)

func main() {
	record := flag.String("record", "", "run the command after the flags with -json, and append its skips and counts to this file")
	report := flag.String("report", "", "print the skips and counts recorded in this file")
	flag.Parse()
	switch {
	case *report != "":
		if err := printReport(os.Stdout, *report); err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(2)
		}
	case *record != "" && flag.NArg() >= 2:
		os.Exit(run(*record, flag.Args()))
	default:
		fmt.Fprintln(os.Stderr, "usage: testsummary -record FILE go test [flags] [packages] | testsummary -report FILE")
		os.Exit(2)
	}
}

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // of a build-output event
	Test       string
	Output     string
}

// run runs the command with -json after its "test" argument and returns
// its exit status (1 if it reported a failure but exited 0).
func run(file string, args []string) int {
	args = withJSON(args)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		return 2
	}
	s := newSummary(os.Stdout)
	s.read(out)
	status := 0
	var exit *exec.ExitError
	if err := cmd.Wait(); errors.As(err, &exit) {
		status = exit.ExitCode()
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		status = 2
	}
	if status == 0 && s.failed > 0 {
		status = 1
	}
	if err := s.save(file); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		return 2
	}
	return status
}

func withJSON(args []string) []string {
	for i, a := range args {
		if a == "test" {
			return append(append(append([]string{}, args[:i+1]...), "-json"), args[i+1:]...)
		}
	}
	return args
}

type skip struct{ pkg, test, why string }

// summary prints what plain go test prints, from the events, and counts.
type summary struct {
	w                       io.Writer
	out                     map[string][]string // a running test's output, by package and test
	skips                   []skip
	passed, failed, skipped int
}

func newSummary(w io.Writer) *summary { return &summary{w: w, out: map[string][]string{}} }

func (s *summary) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Fprintln(s.w, sc.Text()) // not an event: show it as it is
			continue
		}
		s.handle(e)
	}
}

func (s *summary) handle(e event) {
	key := e.Package + " " + e.Test
	switch {
	case e.Action == "build-output":
		fmt.Fprint(s.w, e.Output)
	case e.Action == "output" && e.Test == "":
		if strings.TrimSpace(e.Output) != "PASS" && !strings.HasPrefix(e.Output, "=== ") {
			fmt.Fprint(s.w, e.Output)
		}
	case e.Action == "output":
		s.out[key] = append(s.out[key], e.Output)
	case e.Test == "":
	case e.Action == "pass":
		s.passed++
		delete(s.out, key)
	case e.Action == "fail":
		s.failed++
		for _, l := range s.out[key] {
			if !strings.HasPrefix(l, "=== ") {
				fmt.Fprint(s.w, l)
			}
		}
		delete(s.out, key)
	case e.Action == "skip":
		s.skipped++
		s.skips = append(s.skips, skip{e.Package, e.Test, reason(s.out[key])})
		delete(s.out, key)
	}
}

// reason is a skipped test's message: its output less the framework's
// lines, with the file:line prefix of t.Skip kept.
func reason(lines []string) string {
	var why []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		why = append(why, t)
	}
	if len(why) == 0 {
		return "(no message)"
	}
	return strings.Join(why, " ")
}

// save appends the skips and the counts to file, one tab-separated line
// each.
func (s *summary) save(file string) error {
	f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	for _, k := range s.skips {
		fmt.Fprintf(f, "skip\t%s\t%s\t%s\n", k.pkg, k.test, strings.ReplaceAll(k.why, "\t", " "))
	}
	fmt.Fprintf(f, "count\t%d\t%d\t%d\n", s.passed, s.failed, s.skipped)
	return f.Close()
}

func printReport(w io.Writer, file string) error {
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var skips []string
	var passed, failed, skipped int
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Split(l, "\t")
		switch {
		case f[0] == "skip" && len(f) == 4:
			skips = append(skips, fmt.Sprintf("  %s %s: %s", f[1], f[2], f[3]))
		case f[0] == "count" && len(f) == 4:
			var p, fl, sk int
			fmt.Sscan(f[1], &p) // not an error: a malformed count reads as 0
			fmt.Sscan(f[2], &fl)
			fmt.Sscan(f[3], &sk)
			passed, failed, skipped = passed+p, failed+fl, skipped+sk
		}
	}
	sort.Strings(skips)
	if len(skips) == 0 {
		fmt.Fprintln(w, "no test skipped")
	} else {
		fmt.Fprintf(w, "skipped (%d), and why:\n%s\n", len(skips), strings.Join(skips, "\n"))
	}
	fmt.Fprintf(w, "tests: %d passed, %d failed, %d skipped\n", passed, failed, skipped)
	return nil
}
