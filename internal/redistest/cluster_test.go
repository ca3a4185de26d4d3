package redistest_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/retrykit/retry/internal/redistest"
)

func TestACluster(t *testing.T) {
	c := redistest.StartCluster(t)
	t.Run("has three primaries, each with a replica", func(t *testing.T) { threePrimaries(t, c) })
	t.Run("computes the slots Slot computes", func(t *testing.T) { slots(t, c) })
	t.Run("keeps the keys of a migrated slot", func(t *testing.T) { migration(t, c) })
}

func slots(t *testing.T, c *redistest.Cluster) {
	for _, key := range []string{"", "a", "idempotency:order-1", "{dlq}:letters", "x{dlq}:claim:1", "{}k", "{{a}}", "a{b}{c}", "gobreaker:state:api/call"} {
		v, err := redistest.Do(c.Nodes[0].Addr, "CLUSTER", "KEYSLOT", key)
		if err != nil {
			t.Fatal(err)
		}
		if got := redistest.Slot(key); int64(got) != v.(int64) {
			t.Errorf("Slot(%q) = %d; the server says %d", key, got, v)
		}
	}
}

func threePrimaries(t *testing.T, c *redistest.Cluster) {
	nodes, err := redistest.Topology(c.Nodes[0].Addr)
	if err != nil {
		t.Fatal(err)
	}
	primaries, replicas := 0, 0
	for _, n := range nodes {
		if n.Primary {
			primaries++
		} else {
			replicas++
		}
	}
	if primaries != 3 || replicas != 3 {
		t.Fatalf("%d primaries and %d replicas; want 3 and 3", primaries, replicas)
	}
}

func migration(t *testing.T, c *redistest.Cluster) {
	slot := redistest.Slot("{m}")
	from := c.Primary(t, slot)
	for i := range 20 {
		if _, err := redistest.Do(from.Addr, "SET", fmt.Sprint("{m}", i), strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	to := c.Other(t, slot)
	m := c.Migrate(t, slot, to)
	if n := m.Move(t, 5); n != 5 {
		t.Fatalf("moved %d keys; want 5", n)
	}
	moved := 0
	for i := range 20 {
		if _, err := redistest.Do(from.Addr, "GET", fmt.Sprint("{m}", i)); err != nil && strings.HasPrefix(err.Error(), "ASK ") {
			moved++
		}
	}
	if moved != 5 {
		t.Fatalf("the old primary answers ASK for %d keys; want the 5 it moved", moved)
	}
	if _, ask := c.Redirects(t); ask < 5 {
		t.Fatalf("the nodes count %d ASK replies; want at least the 5 just sent", ask)
	}
	if n := m.Finish(t); n != 20 {
		t.Fatalf("moved %d keys; want 20", n)
	}
	if got := c.Primary(t, slot); got != to {
		t.Fatalf("slot %d is served by %s; want %s", slot, got.Addr, to.Addr)
	}
	for i := range 20 {
		v, err := redistest.Do(to.Addr, "GET", fmt.Sprint("{m}", i))
		if err != nil || v != strconv.Itoa(i) {
			t.Fatalf("GET {m}%d on the new primary = %v, %v", i, v, err)
		}
	}
	if _, err := redistest.Do(from.Addr, "GET", "{m}0"); err == nil || !strings.HasPrefix(err.Error(), "MOVED ") {
		t.Fatalf("the old primary answers %v; want MOVED", err)
	}
}
