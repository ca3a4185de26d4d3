package wyrand

import "testing"

func TestSameSeedSameSequenceAndNoShortCycle(t *testing.T) {
	a, b := New(1), New(1)
	seen := make(map[uint64]bool)
	for range 10_000 {
		x := a.Uint64()
		if x != b.Uint64() {
			t.Fatal("the same seed must give the same sequence")
		}
		if seen[x] {
			t.Fatalf("repeated value %d within 10,000 draws", x)
		}
		seen[x] = true
	}
	c, d := New(2), New(1)
	if c.Uint64() == d.Uint64() {
		t.Fatal("different seeds gave the same first value")
	}
}

func TestBitsAreBalanced(t *testing.T) {
	r := New(42)
	var ones [64]int
	const n = 20_000
	for range n {
		x := r.Uint64()
		for i := range ones {
			ones[i] += int(x >> i & 1)
		}
	}
	for i, c := range ones {
		if c < n*45/100 || c > n*55/100 {
			t.Errorf("bit %d set %d times in %d draws", i, c, n)
		}
	}
}
