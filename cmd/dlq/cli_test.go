package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrykit/retry/policy"
)

func TestHelpListsTheCommands(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {}, {"--db", "x.db", "--help"}} {
		t.Run(strings.Join(append([]string{"dlq"}, args...), " "), func(t *testing.T) {
			r := dlqCmd(t, args...).must(t, 0)
			for _, want := range []string{"commands:", "stats", "ls", "show", "replay", "purge", "--stop-reason", "-db FILE", "-redis URL"} {
				if !strings.Contains(r.stdout, want) {
					t.Fatalf("help lacks %q:\n%s", want, r.stdout)
				}
			}
		})
	}
	r := dlqCmd(t, "purge", "--help").must(t, 0)
	if !strings.HasPrefix(r.stdout, "usage: dlq purge ") || !strings.Contains(r.stdout, "-yes") || r.stderr != "" {
		t.Fatalf("purge --help printed\n%s\n(stderr %q)", r.stdout, r.stderr)
	}
}

// TestLsHelpNamesEveryStopReason: the reasons --stop-reason takes come from
// the one list, so a reason added to it is offered without a change here.
func TestLsHelpNamesEveryStopReason(t *testing.T) {
	r := dlqCmd(t, "ls", "--help").must(t, 0)
	for s := range policy.Stops() {
		if has := strings.Contains(r.stdout, s.String()); has != (s != policy.StopCanceled) {
			t.Errorf("ls --help names %q: %v; want it named unless it makes no letter", s, has)
		}
	}
	if !strings.Contains(r.stdout, "failed") {
		t.Errorf("ls --help does not name failed:\n%s", r.stdout)
	}
}

func TestPurgeAllAsksFirst(t *testing.T) {
	left := func(t *testing.T, db string) int {
		t.Helper()
		return len(decodeJSON[[]any](t, dlqCmd(t, "--db", db, "--json", "ls").must(t, 0)))
	}
	t.Run("without a terminal it is refused, even with a yes piped in", func(t *testing.T) {
		db, _ := seededFile(t)
		r := dlqWith(t, strings.NewReader("y\n"), nil, "--db", db, "purge", "--all").must(t, 2)
		if !strings.Contains(r.stderr, "give --yes") || left(t, db) != 4 {
			t.Fatalf("stderr %q, %d letters left; want a refusal and 4", r.stderr, left(t, db))
		}
	})
	t.Run("--yes purges without asking", func(t *testing.T) {
		db, _ := seededFile(t)
		r := dlqCmd(t, "--db", db, "purge", "--all", "--yes").must(t, 0)
		if r.stdout != "purged 4 letters\n" || strings.Contains(r.stderr, "[y/N]") || left(t, db) != 0 {
			t.Fatalf("purge --all --yes said %q (stderr %q)", r.stdout, r.stderr)
		}
	})
	t.Run("a selection is not asked about", func(t *testing.T) {
		db, _ := seededFile(t)
		dlqCmd(t, "--db", db, "purge", "--source", "llm-jobs").must(t, 0)
	})
	for _, tt := range []struct {
		name, answer string
		code, left   int
	}{{"y", "y\n", 0, 0}, {"yes", "yes\n", 0, 0}, {"n", "n\n", 1, 4}, {"an empty line", "\n", 1, 4}, {"end of input", "", 1, 4}} {
		t.Run("on a terminal, answering "+tt.name, func(t *testing.T) {
			db, _ := seededFile(t)
			r := onTerminal(t, tt.answer, "--db", db, "purge", "--all").must(t, tt.code)
			if !strings.Contains(r.stderr, "purge all 4 letters of "+db+"? This cannot be undone. [y/N]") || left(t, db) != tt.left {
				t.Fatalf("stderr %q, %d letters left; want the question, and %d left", r.stderr, left(t, db), tt.left)
			}
		})
	}
}

func TestADbThatDoesNotExistIsAnError(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "typo.db")
	for _, args := range [][]string{
		{"stats"}, {"ls"}, {"show", "0000000000000000"}, {"replay", "--all", "--exec", "true"},
		{"replay", "--all", "--dry-run"}, {"purge", "--all", "--yes"}, {"purge", "--source", "x"},
	} {
		t.Run(args[0]+" "+strings.Join(args[1:], " "), func(t *testing.T) {
			r := dlqCmd(t, append([]string{"--db", missing}, args...)...).must(t, 1)
			if !strings.Contains(r.stderr, "--db "+missing+": no such file") {
				t.Fatalf("stderr %q; want the path said missing", r.stderr)
			}
			if _, err := os.Stat(missing); !os.IsNotExist(err) {
				t.Fatalf("%s was created (%v)", missing, err)
			}
		})
	}
	if r := dlqCmd(t, "--db", dir, "stats").must(t, 1); !strings.Contains(r.stderr, "is a directory") {
		t.Fatalf("--db of a directory said %q", r.stderr)
	}
}

func TestAnInvalidRedisURLIsReportedWithoutItsPassword(t *testing.T) {
	tests := []struct {
		name, url string
		code      int
		want      string
	}{
		{"a port that is not a number", "redis://user:s3cret@127.0.0.1:notaport/0", 2, "--redis redis://xxxxx@127.0.0.1:notaport/0"},
		{"a password with a raw slash", "redis://user:s3c/ret@127.0.0.1:6379/0", 2, "--redis redis://xxxxx@127.0.0.1:6379/0"},
		{"a database that is not a number", "redis://:s3cret@127.0.0.1:6379/notanumber", 2, `invalid database number: "notanumber"`},
		{"an escaped password", "redis://u:s3%2Fcret@127.0.0.1:6379/x", 2, `invalid database number: "x"`},
		{"another scheme", "ftp://user:s3cret@host/", 2, "invalid URL scheme: ftp"},
		{"a server that is not there", "redis://user:s3cret@127.0.0.1:1/0", 1, "redis 127.0.0.1:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := []result{dlqCmd(t, "--redis", tt.url, "stats").must(t, tt.code)}
			if tt.code == 2 { // the same from the environment (an unreachable server takes seconds to say so)
				runs = append(runs, dlqWith(t, nil, []string{"DLQ_REDIS=" + tt.url}, "stats").must(t, tt.code))
			}
			for _, r := range runs {
				if strings.Contains(r.stderr, "s3c") || !strings.Contains(r.stderr, tt.want) {
					t.Fatalf("stderr %q; want %q, and no part of the password", r.stderr, tt.want)
				}
			}
		})
	}
}
