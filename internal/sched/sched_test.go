package sched

import (
	"math"
	"testing"
	"time"
)

func TestDoubling(t *testing.T) {
	for _, c := range []struct {
		base, limit time.Duration
		n           int
		want        time.Duration
	}{
		{time.Second, 0, 1, time.Second},
		{time.Second, 0, 0, time.Second},
		{time.Second, 0, 3, 4 * time.Second},
		{time.Second, 3 * time.Second, 3, 3 * time.Second},
		{time.Second, 0, 64, math.MaxInt64},
		{1, 0, 63, 1 << 62},
		{1, 0, 64, math.MaxInt64},
		{time.Second, time.Hour, math.MaxInt, time.Hour},
		{0, time.Second, 1000, 0},
	} {
		if got := Doubling(c.base, c.limit, c.n); got != c.want {
			t.Errorf("Doubling(%v, %v, %d) = %v, want %v", c.base, c.limit, c.n, got, c.want)
		}
	}
}
