package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/sqlite"
)

// hostile is text a job's producer controls, carrying terminal escape
// sequences: a title change, a screen clear, a bell, and a C1 CSI.
const hostile = "\x1b]0;owned\x07\x1b[2J\x1b[31mred\u009b0m\r"

// poisonedFile holds one letter whose every field a producer controls
// carries escape sequences.
func poisonedFile(t *testing.T) (string, dlq.Letter) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dlq.db")
	q, err := sqlite.Open(context.Background(), path, sqlite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	job := dlq.Job{ID: "job" + hostile, Source: "src" + hostile, Payload: []byte("payload" + hostile),
		Metadata: map[string]string{"k" + hostile: "v" + hostile}}
	l, _ := dlq.NewLetter(job, errors.New("boom"+hostile), time.Now())
	if _, err := q.Put(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	return path, l
}

func TestTablesStripTerminalControlCharacters(t *testing.T) {
	db, l := poisonedFile(t)
	for _, args := range [][]string{{"ls"}, {"show", l.ID}, {"stats"}, {"replay", "--id", l.ID, "--dry-run"}} {
		t.Run(args[0], func(t *testing.T) {
			out := dlqCmd(t, append([]string{"--db", db}, args...)...).must(t, 0).stdout
			for _, r := range out {
				if unicode.IsControl(r) && r != '\n' {
					t.Fatalf("dlq %v printed the control character %U:\n%q", args, r, out)
				}
			}
			if !strings.Contains(out, `\x1b`) {
				t.Fatalf("dlq %v hid the escape instead of showing it as \\x1b:\n%q", args, out)
			}
		})
	}
}
