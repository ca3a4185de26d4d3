//go:build !race

package retry_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The race detector makes sync.Pool drop what it keeps: counted without it.
func TestHedgedSuccessAllocatesLittle(t *testing.T) {
	r := hedging(t, time.Hour, 2)
	ctx := t.Context()
	allocs := testing.AllocsPerRun(1000, func() { _, _ = r.Run(ctx, succeed) })
	assert.LessOrEqual(t, allocs, 2.0, "the attempt's cancellable context; the call's state and timer are reused")
}
