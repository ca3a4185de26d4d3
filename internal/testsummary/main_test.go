package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// events is go test -json's report of a package with a passing, a failing
// and a skipped test.
const events = `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestPasses"}
{"Action":"output","Package":"p","Test":"TestPasses","Output":"=== RUN   TestPasses\n"}
{"Action":"output","Package":"p","Test":"TestPasses","Output":"    p_test.go:3: chatter nobody reads\n"}
{"Action":"pass","Package":"p","Test":"TestPasses"}
{"Action":"run","Package":"p","Test":"TestFails"}
{"Action":"output","Package":"p","Test":"TestFails","Output":"=== RUN   TestFails\n"}
{"Action":"output","Package":"p","Test":"TestFails","Output":"    p_test.go:7: the cause\n"}
{"Action":"output","Package":"p","Test":"TestFails","Output":"--- FAIL: TestFails (0.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestFails"}
{"Action":"run","Package":"p","Test":"TestNeedsRedis"}
{"Action":"output","Package":"p","Test":"TestNeedsRedis","Output":"=== RUN   TestNeedsRedis\n"}
{"Action":"output","Package":"p","Test":"TestNeedsRedis","Output":"--- SKIP: TestNeedsRedis (0.00s)\n"}
{"Action":"output","Package":"p","Test":"TestNeedsRedis","Output":"    p_test.go:9: redis-server not found on PATH\n"}
{"Action":"skip","Package":"p","Test":"TestNeedsRedis"}
{"Action":"output","Package":"p","Output":"FAIL\n"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t0.01s\n"}
{"Action":"fail","Package":"p"}
`

func TestTheSummaryPrintsWhatPlainGoTestPrintsAndKeepsTheSkips(t *testing.T) {
	var out bytes.Buffer
	s := newSummary(&out)
	s.read(strings.NewReader(events))
	want := "    p_test.go:7: the cause\n--- FAIL: TestFails (0.00s)\nFAIL\nFAIL\tp\t0.01s\n"
	if out.String() != want {
		t.Errorf("printed:\n%s\nwant:\n%s", out.String(), want)
	}
	if s.passed != 1 || s.failed != 1 || s.skipped != 1 {
		t.Errorf("counts %d passed, %d failed, %d skipped; want 1 of each", s.passed, s.failed, s.skipped)
	}
	file := filepath.Join(t.TempDir(), "skips")
	if err := s.save(file); err != nil {
		t.Fatal(err)
	}
	if err := s.save(file); err != nil { // a second module appends
		t.Fatal(err)
	}
	var report bytes.Buffer
	if err := printReport(&report, file); err != nil {
		t.Fatal(err)
	}
	wantReport := "skipped (2), and why:\n" +
		"  p TestNeedsRedis: p_test.go:9: redis-server not found on PATH\n" +
		"  p TestNeedsRedis: p_test.go:9: redis-server not found on PATH\n" +
		"tests: 2 passed, 2 failed, 2 skipped\n"
	if report.String() != wantReport {
		t.Errorf("report:\n%s\nwant:\n%s", report.String(), wantReport)
	}
}

func TestAReportOfNothingSaysSo(t *testing.T) {
	var report bytes.Buffer
	if err := printReport(&report, filepath.Join(t.TempDir(), "none")); err != nil {
		t.Fatal(err)
	}
	if want := "no test skipped\ntests: 0 passed, 0 failed, 0 skipped\n"; report.String() != want {
		t.Errorf("report %q, want %q", report.String(), want)
	}
}

func TestRunReturnsTheCommandsExitStatus(t *testing.T) {
	file := filepath.Join(t.TempDir(), "skips")
	if got := run(file, []string{"false", "test"}); got != 1 {
		t.Errorf("run(false) = %d, want 1", got)
	}
	if got := run(file, []string{"true", "test"}); got != 0 {
		t.Errorf("run(true) = %d, want 0", got)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("no record written: %v", err)
	}
}

func TestJSONGoesRightAfterTest(t *testing.T) {
	got := strings.Join(withJSON([]string{"go", "test", "-race", "./..."}), " ")
	if got != "go test -json -race ./..." {
		t.Errorf("withJSON = %q", got)
	}
}
