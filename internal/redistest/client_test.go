package redistest_test

import (
	"crypto/sha1"
	"encoding/hex"
	"sync/atomic"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/retrykit/retry/internal/redistest"
)

// A ScriptLog on a plain server (which, unlike a cluster, runs a script on
// keys of any slots) counts each script's runs and notes the cross-slot
// ones; CheckOneSlot reports both kinds of failure.
func TestAScriptLogNotesEveryScriptRunAndItsCrossSlotKeys(t *testing.T) {
	s := redistest.Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr})
	defer c.Close()
	var log redistest.ScriptLog
	c.AddHook(&log)
	const body = "return #KEYS"
	sum := sha1.Sum([]byte(body))
	sha := hex.EncodeToString(sum[:])
	ctx := t.Context()
	if err := c.Eval(ctx, body, []string{"{a}x", "{a}y"}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.EvalSha(ctx, sha, []string{"{a}x"}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil { // not a script
		t.Fatal(err)
	}
	if got := log.Runs(); got != 2 || len(log.CrossSlot()) != 0 {
		t.Fatalf("Runs = %d, CrossSlot = %v; want 2 runs, none across slots", got, log.CrossSlot())
	}
	var ok recorder
	log.CheckOneSlot(&ok, map[string]string{sha: "count"})
	if ok.failed.Load() {
		t.Fatal("CheckOneSlot failed a log of one-slot runs of the script named")
	}
	var missing recorder
	log.CheckOneSlot(&missing, map[string]string{"0000": "never run"})
	if !missing.failed.Load() {
		t.Fatal("CheckOneSlot passed a script that never ran")
	}
	if err := c.Eval(ctx, body, []string{"a", "b"}).Err(); err != nil {
		t.Fatal(err)
	}
	if got := log.CrossSlot(); len(got) != 1 || got[0] != "[a b]" {
		t.Fatalf("CrossSlot = %v; want [[a b]]", got)
	}
	var cross recorder
	log.CheckOneSlot(&cross, nil)
	if !cross.failed.Load() {
		t.Fatal("CheckOneSlot passed a script run on keys of two slots")
	}
}

// recorder is a testing.TB that notes a failure instead of failing.
type recorder struct {
	testing.TB
	failed atomic.Bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed.Store(true) }

func TestWorkersRunUntilStopped(t *testing.T) {
	var runs atomic.Int32
	stop := redistest.Workers(t, 3, func() { runs.Add(1) })
	redistest.Until(t, "work done", func() bool { return runs.Load() > 100 })
	stop()
	n := runs.Load()
	stop() // a second stop is fine
	if runs.Load() != n {
		t.Fatal("work ran after stop returned")
	}
}
