package queuetest_test

import (
	"testing"

	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/queuetest"
)

// The suite checks itself against the reference implementation.
func TestRunPassesOnTheMemoryQueue(t *testing.T) {
	queuetest.Run(t, func(t *testing.T) dlq.Queue {
		q, err := dlq.NewMemory(0)
		if err != nil {
			t.Fatal(err)
		}
		return q
	})
}
