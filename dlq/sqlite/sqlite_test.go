package sqlite_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/queuetest"
	"github.com/retrykit/retry/dlq/sqlite"
)

func open(t *testing.T, path string) *sqlite.Queue {
	t.Helper()
	q, err := sqlite.Open(context.Background(), path, sqlite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

func TestConformance(t *testing.T) {
	queuetest.Run(t, func(t *testing.T) dlq.Queue { return open(t, filepath.Join(t.TempDir(), "dlq.db")) })
}

func letter(id string) dlq.Letter {
	l, _ := dlq.NewLetter(dlq.Job{ID: id, Source: "llm-jobs", Payload: []byte("payload " + id)},
		errors.New("timeout after 3012ms on 10.0.0.7"), time.Now())
	return l
}

func TestLettersSurviveAReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dlq.db")
	q, err := sqlite.Open(context.Background(), path, sqlite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	want := letter("1")
	if _, err := q.Put(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	q.Close()
	got, err := open(t, path).Get(context.Background(), want.ID)
	if err != nil || got.Job.ID != "1" {
		t.Fatalf("Get after a reopen = %+v, %v", got, err)
	}
}

// The child of TestKilledWriterLosesNoAcknowledgedLetter: it writes letters
// from two goroutines until it is killed, printing each id once Put returned.
const childEnv = "DLQ_SQLITE_KILL_CHILD"

func TestKilledWriterLosesNoAcknowledgedLetter(t *testing.T) {
	if path := os.Getenv(childEnv); path != "" {
		writeUntilKilled(path, os.Getenv(childEnv+"_ROUND"))
		return
	}
	path := filepath.Join(t.TempDir(), "dlq.db")
	var acked []string
	for round := range 3 {
		acked = append(acked, killAfter(t, path, round, 100+round*70)...)
	}
	q := open(t, path)
	for _, id := range acked {
		if _, err := q.Get(context.Background(), id); err != nil {
			t.Fatalf("acknowledged letter %s lost after SIGKILL: %v", id, err)
		}
	}
	n, _ := q.Count(context.Background(), dlq.Filter{})
	if n < len(acked) {
		t.Fatalf("%d letters, fewer than the %d acknowledged", n, len(acked))
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q, %v", check, err)
	}
	t.Logf("%d letters acknowledged before three SIGKILLs, all there (%d stored)", len(acked), n)
}

// killAfter runs a writer child, kills it with SIGKILL once it acknowledged
// n letters, and returns every id it acknowledged, before or during the kill.
func killAfter(t *testing.T, path string, round, n int) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriterLosesNoAcknowledgedLetter$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+path, fmt.Sprintf("%s_ROUND=%d", childEnv, round))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if id, ok := strings.CutPrefix(lines.Text(), "acked "); ok {
			acked = append(acked, id)
		}
		if len(acked) == n {
			cmd.Process.Kill() // SIGKILL, mid-stream: the writers are busy
		}
	}
	err = cmd.Wait()
	if len(acked) < n || err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("round %d: the writer acknowledged %d letters and ended with %v; want at least %d and killed", round, len(acked), err, n)
	}
	return acked
}

func writeUntilKilled(path, round string) {
	q, err := sqlite.Open(context.Background(), path, sqlite.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var mu sync.Mutex // one line at a time on stdout
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := 0; ; i++ {
				l := letter(fmt.Sprintf("r%s-w%d-%d", round, w, i))
				if _, err := q.Put(context.Background(), l); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				mu.Lock()
				fmt.Fprintln(os.Stdout, "acked", l.ID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

func TestAnOperatorCanReadTheFileWithTheSqlite3Shell(t *testing.T) {
	bin, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("the sqlite3 shell is not installed (apt-get install sqlite3)")
	}
	path := filepath.Join(t.TempDir(), "dlq.db")
	q := open(t, path)
	l := letter("42")
	q.Put(context.Background(), l)
	out, err := exec.Command(bin, path,
		"SELECT id, source, job_id, stop_reason, class, attempts, last_error, grp, json_extract(record, '$.job.id') FROM dlq_letters").CombinedOutput()
	want := strings.Join([]string{l.ID, "llm-jobs", "42", "failed", "unclassified", "1", "timeout after 3012ms on 10.0.0.7", l.Group(), "42"}, "|")
	if err != nil || strings.TrimSpace(string(out)) != want {
		t.Fatalf("sqlite3 printed %q (%v), want %q", out, err, want)
	}
}

func TestACorruptRecordIsReportedNotPanicked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dlq.db")
	q := open(t, path)
	l := letter("1")
	q.Put(context.Background(), l)
	db, _ := sql.Open("sqlite", path)
	defer db.Close()
	if _, err := db.Exec(`UPDATE dlq_letters SET record = '{"v":1,"id":' WHERE id = ?`, l.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Get(context.Background(), l.ID); !errors.Is(err, dlq.ErrCorrupt) || !strings.Contains(err.Error(), l.ID) {
		t.Fatalf("Get = %v; want ErrCorrupt naming the letter", err)
	}
	if _, err := q.List(context.Background(), dlq.Filter{}); !errors.Is(err, dlq.ErrCorrupt) {
		t.Fatalf("List = %v; want ErrCorrupt", err)
	}
	if err := q.Discard(context.Background(), l.ID); err != nil {
		t.Fatalf("Discard of a corrupt letter = %v; an operator must be able to remove it", err)
	}
}

func TestOpenRefusesANewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dlq.db")
	open(t, path)
	db, _ := sql.Open("sqlite", path)
	db.Exec(`UPDATE dlq_meta SET value = '4' WHERE key = 'schema_version'`)
	db.Close()
	if _, err := sqlite.Open(context.Background(), path, sqlite.Config{}); err == nil || !strings.Contains(err.Error(), "schema version 4") {
		t.Fatalf("Open = %v; want a refusal of schema version 4", err)
	}
}

func TestLapsedClaims(t *testing.T) {
	queuetest.RunLapses(t, func(t *testing.T) queuetest.Handles {
		path := filepath.Join(t.TempDir(), "dlq.db")
		return func(claim time.Duration) dlq.Queue {
			q, err := sqlite.Open(context.Background(), path, sqlite.Config{ClaimTimeout: claim})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { q.Close() })
			return q
		}
	})
}

func TestOpenValidatesItsArguments(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		path  string
		c     sqlite.Config
		field string
	}{
		{"an empty path", "", sqlite.Config{}, "sqlite.Open"},
		{"a path with a query", filepath.Join(dir, "x.db?mode=ro"), sqlite.Config{}, "sqlite.Open"},
		{"a negative busy timeout", filepath.Join(dir, "x.db"), sqlite.Config{BusyTimeout: -1}, "sqlite.Config.BusyTimeout"},
		{"a busy timeout under a millisecond", filepath.Join(dir, "x.db"), sqlite.Config{BusyTimeout: time.Microsecond}, "sqlite.Config.BusyTimeout"},
		{"a negative claim timeout", filepath.Join(dir, "x.db"), sqlite.Config{ClaimTimeout: -1}, "sqlite.Config.ClaimTimeout"},
		{"a claim timeout under a millisecond", filepath.Join(dir, "x.db"), sqlite.Config{ClaimTimeout: time.Microsecond}, "sqlite.Config.ClaimTimeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused, naming "+tt.field, func(t *testing.T) {
			_, err := sqlite.Open(context.Background(), tt.path, tt.c)
			var inv *retry.InvalidError
			if !errors.As(err, &inv) || inv.Name != tt.field {
				t.Fatalf("Open = %v; want an *InvalidError naming %s", err, tt.field)
			}
		})
	}
}
