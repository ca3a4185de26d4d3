package storetest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/idempotency/storetest"
)

func TestTheMemoryStorePasses(t *testing.T) {
	storetest.Run(t, func(t *testing.T) idempotency.Store {
		s, err := idempotency.NewMemoryStore(idempotency.MemoryConfig{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// forgetful ignores the leases it is given: its claims never expire in time.
type forgetful struct{ idempotency.Store }

func (f forgetful) Claim(ctx context.Context, key idempotency.StoreKey, rec idempotency.Record, _ time.Duration) (idempotency.Record, bool, error) {
	return f.Store.Claim(ctx, key, rec, time.Hour)
}

const brokenEnv = "STORETEST_RUN_BROKEN"

func TestABrokenStoreFails(t *testing.T) {
	if os.Getenv(brokenEnv) == "1" {
		storetest.Run(t, func(t *testing.T) idempotency.Store {
			s, _ := idempotency.NewMemoryStore(idempotency.MemoryConfig{})
			return forgetful{s}
		})
		return
	}
	if testing.Short() {
		t.Skip("runs the suite in a subprocess")
	}
	// The suite must fail a store that breaks the contract: run it in a
	// subprocess, where its failure does not fail this test.
	cmd := exec.Command(os.Args[0], "-test.run=^TestABrokenStoreFails$", "-test.v")
	cmd.Env = append(os.Environ(), brokenEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the suite passed a store whose claims ignore their lease:\n%s", out)
	}
	for _, want := range []string{
		"--- FAIL: TestABrokenStoreFails/a_claim_expires_after_its_lease_and_its_stale_holder_is_fenced_off",
		"--- PASS: TestABrokenStoreFails/a_claim_on_a_free_key_is_granted",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the suite's output lacks %q:\n%s", want, out)
		}
	}
}

func TestRunWithoutATestDoesNothing(t *testing.T) {
	storetest.Run(nil, nil) // nothing to report to, and no panic
}
