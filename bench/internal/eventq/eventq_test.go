package eventq

import (
	"math/rand/v2"
	"slices"
	"testing"
)

type ev struct{ at, seq int }

func TestPopsInOrderOfTimeThenSequence(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	q := New(func(a, b ev) bool { return a.at < b.at || (a.at == b.at && a.seq < b.seq) }, 0)
	var want []ev
	for seq := range 1000 {
		e := ev{at: rng.IntN(50), seq: seq}
		want = append(want, e)
		q.Push(e)
	}
	slices.SortFunc(want, func(a, b ev) int {
		if a.at != b.at {
			return a.at - b.at
		}
		return a.seq - b.seq
	})
	for i, w := range want {
		if got := q.Pop(); got != w {
			t.Fatalf("pop %d = %v, want %v", i, got, w)
		}
	}
	if q.Len() != 0 {
		t.Fatalf("Len = %d after popping everything", q.Len())
	}
}
