// Package sched holds schedule arithmetic that both package backoff and
// package policy need inlined.
package sched

import (
	"math"
	"time"
)

// Doubling is min(limit, base·2^(n-1)) without overflow, for n ≥ 1 (smaller
// n count as 1); a limit ≤ 0 means no cap. It is small enough to be inlined.
func Doubling(base, limit time.Duration, n int) time.Duration {
	if limit <= 0 {
		limit = math.MaxInt64
	}
	shift := uint(max(n, 1) - 1)
	if shift >= 63 {
		if base <= 0 {
			return 0 // however many doublings
		}
		return limit
	}
	if base > limit>>shift {
		return limit
	}
	return base << shift
}
