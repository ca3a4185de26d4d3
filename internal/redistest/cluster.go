package redistest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RequireClusterEnv is the environment variable that turns a missing
// redis-server or redis-cli into a failure of the tests that need a Redis
// Cluster.
const RequireClusterEnv = "RETRY_REQUIRE_REDIS_CLUSTER"

// NodeTimeout is the cluster-node-timeout of the clusters this package
// starts: a primary that has not answered its peers for this long is
// suspected, and once the others agree, its replica takes over. Redis's
// default is 15s; a test cannot wait that long.
const NodeTimeout = 1000 * time.Millisecond

// A Cluster is a Redis Cluster of six redis-servers on loopback ports: three
// primaries, each with one replica, their slots assigned by
// `redis-cli --cluster create --cluster-replicas 1`. Persistence is off.
type Cluster struct {
	Nodes []*Server // in start order; which are primaries is the cluster's to say (Primary, Topology)
}

// StartCluster starts a Cluster for t and stops it when t ends. A test
// binary needs one at most for the tests that only use it (run them as
// subtests of one test, each with keys of its own), and one more for each
// test that kills a node. Without redis-server or redis-cli it skips t, or
// fails it with RETRY_REQUIRE_REDIS_CLUSTER=1.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	server, cli := clusterBinaries(t)
	c, err := launchCluster(server, cli, t.TempDir())
	if err != nil {
		t.Fatalf("redis cluster did not start: %v", err)
	}
	t.Cleanup(c.Stop)
	return c
}

// clusterBinaries returns the paths of redis-server and redis-cli, or skips
// (or fails) t.
func clusterBinaries(t testing.TB) (server, cli string) {
	t.Helper()
	server, err := exec.LookPath("redis-server")
	if err == nil {
		cli, err = exec.LookPath("redis-cli")
	}
	if err != nil {
		if os.Getenv(RequireClusterEnv) == "1" {
			t.Fatalf("a Redis Cluster needs redis-server and redis-cli on PATH, and %s=1: %v", RequireClusterEnv, err)
		}
		t.Skipf("a Redis Cluster needs redis-server and redis-cli on PATH (apt-get install redis-server brings both; %s=1 makes this a failure): %v", RequireClusterEnv, err)
	}
	return server, cli
}

// clusterPort returns a free loopback port whose cluster bus port (the port
// plus 10000) is free too.
func clusterPort() (int, error) {
	for range 50 {
		port, err := freePort()
		if err != nil {
			return 0, err
		}
		if port+10000 > 65535 {
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+10000)))
		if err == nil {
			ln.Close()
			return port, nil
		}
	}
	return 0, errors.New("no free port with a free cluster bus port")
}

func launchCluster(server, cli, dir string) (*Cluster, error) {
	c := &Cluster{}
	for i := range 6 {
		ndir := fmt.Sprintf("%s/node%d", dir, i)
		if err := os.MkdirAll(ndir, 0o755); err != nil {
			c.Stop()
			return nil, err
		}
		s, err := launch(server, ndir, []string{"--cluster-enabled", "yes",
			"--cluster-config-file", ndir + "/nodes.conf",
			"--cluster-node-timeout", strconv.Itoa(int(NodeTimeout.Milliseconds())),
			"--repl-diskless-sync-delay", "0"}, clusterPort)
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	out, err := exec.Command(cli, append(args, "--cluster-replicas", "1", "--cluster-yes")...).CombinedOutput()
	if err == nil {
		err = c.waitHealthy(20 * time.Second)
	}
	if err != nil {
		c.Stop()
		return nil, fmt.Errorf("%w; redis-cli said:\n%s", err, out)
	}
	return c, nil
}

// Addrs returns the address of every node, for a client's seed list.
func (c *Cluster) Addrs() []string {
	var out []string
	for _, s := range c.Nodes {
		out = append(out, s.Addr)
	}
	return out
}

// Stop kills every node (SIGKILL).
func (c *Cluster) Stop() {
	for _, s := range c.Nodes {
		s.stop()
	}
}

// Node is one line of CLUSTER NODES.
type Node struct {
	ID, Addr string
	Primary  bool
	Of       string // a replica's primary's ID
	Failed   bool   // flagged fail or pfail
	Slots    []int  // the slots it serves, primaries only
}

// Topology returns the cluster as the node at addr sees it (CLUSTER NODES).
func Topology(addr string) ([]Node, error) {
	out, err := text(addr, "CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	var nodes []Node
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			return nil, fmt.Errorf("CLUSTER NODES line %q", line)
		}
		n := Node{ID: f[0], Addr: strings.Split(f[1], "@")[0], Primary: strings.Contains(f[2], "master"),
			Failed: strings.Contains(f[2], "fail"), Of: strings.Trim(f[3], "-")}
		if strings.Contains(f[2], "handshake") || strings.Contains(f[2], "noaddr") || f[7] != "connected" {
			n.Failed = true
		}
		for _, r := range f[8:] {
			n.Slots = append(n.Slots, slotRange(r)...)
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// slotRange parses "5", "0-5460"; a slot in migration ("[5->-id]") is
// skipped.
func slotRange(r string) []int {
	if strings.HasPrefix(r, "[") {
		return nil
	}
	lo, hi, found := strings.Cut(r, "-")
	a, _ := strconv.Atoi(lo)
	b := a
	if found {
		b, _ = strconv.Atoi(hi)
	}
	out := make([]int, 0, b-a+1)
	for i := a; i <= b; i++ {
		out = append(out, i)
	}
	return out
}

// live returns the nodes whose process runs.
func (c *Cluster) live() []*Server {
	var out []*Server
	for _, s := range c.Nodes {
		if s.cmd.ProcessState == nil {
			out = append(out, s)
		}
	}
	return out
}

// healthy is nil when every live node sees the cluster in state ok, every
// node it knows of alive or (if dead) failed over, and each of the three
// primaries serving its slots; and every live replica's link to its primary
// is up.
func (c *Cluster) healthy() error {
	live := c.live()
	for _, s := range live {
		info, err := text(s.Addr, "CLUSTER", "INFO")
		if err != nil {
			return err
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return fmt.Errorf("%s: cluster state not ok", s.Addr)
		}
		nodes, err := Topology(s.Addr)
		if err != nil {
			return err
		}
		if err := c.agreed(nodes); err != nil {
			return fmt.Errorf("%s: %w", s.Addr, err)
		}
		repl, err := text(s.Addr, "INFO", "replication")
		if err != nil {
			return err
		}
		if strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
			return fmt.Errorf("%s: replica not in sync", s.Addr)
		}
	}
	return nil
}

// agreed checks one node's view: each live node known and healthy, three
// primaries with slots, all 16384 slots served by a live one, every other
// live node a replica.
func (c *Cluster) agreed(nodes []Node) error {
	alive := map[string]bool{}
	for _, s := range c.live() {
		alive[s.Addr] = true
	}
	primaries, slots := 0, 0
	for _, n := range nodes {
		switch {
		case alive[n.Addr] && n.Failed:
			return fmt.Errorf("sees live node %s as failed or unreachable", n.Addr)
		case !alive[n.Addr] && !n.Failed:
			return fmt.Errorf("does not yet see dead node %s as failed", n.Addr)
		case alive[n.Addr] && n.Primary && len(n.Slots) == 0:
			return fmt.Errorf("sees %s as a primary without slots, not yet as a replica", n.Addr)
		case alive[n.Addr] && n.Primary:
			primaries++
			slots += len(n.Slots)
		}
	}
	if len(nodes) != len(c.Nodes) || primaries != 3 || slots != 16384 {
		return fmt.Errorf("knows %d nodes, %d live primaries serving %d slots", len(nodes), primaries, slots)
	}
	return nil
}

func (c *Cluster) waitHealthy(limit time.Duration) error {
	if err := poll(limit, 50*time.Millisecond, c.healthy); err != nil {
		return fmt.Errorf("cluster not healthy within %v: %w", limit, err)
	}
	return nil
}

// server returns the node at addr.
func (c *Cluster) server(addr string) *Server {
	for _, s := range c.Nodes {
		if s.Addr == addr {
			return s
		}
	}
	return nil
}

// view returns the topology as a live node sees it.
func (c *Cluster) view(t testing.TB) []Node {
	t.Helper()
	var err error
	for _, s := range c.live() {
		var nodes []Node
		if nodes, err = Topology(s.Addr); err == nil {
			return nodes
		}
	}
	t.Fatalf("no live node answers CLUSTER NODES: %v", err)
	return nil
}

// Primary returns the live primary that serves slot.
func (c *Cluster) Primary(t testing.TB, slot int) *Server {
	t.Helper()
	for _, n := range c.view(t) {
		if n.Primary && !n.Failed && containsInt(n.Slots, slot) {
			return c.server(n.Addr)
		}
	}
	t.Fatalf("no live primary serves slot %d", slot)
	return nil
}

// Other returns a live primary other than the one that serves slot: where
// to migrate it.
func (c *Cluster) Other(t testing.TB, slot int) *Server {
	t.Helper()
	from := c.Primary(t, slot)
	for _, n := range c.view(t) {
		if n.Primary && !n.Failed && len(n.Slots) > 0 && n.Addr != from.Addr {
			return c.server(n.Addr)
		}
	}
	t.Fatalf("no other live primary")
	return nil
}

// Replica returns the replica of primary.
func (c *Cluster) Replica(t testing.TB, primary *Server) *Server {
	t.Helper()
	nodes := c.view(t)
	id := nodeID(nodes, primary.Addr)
	for _, n := range nodes {
		if !n.Primary && n.Of == id && !n.Failed {
			return c.server(n.Addr)
		}
	}
	t.Fatalf("%s has no live replica", primary.Addr)
	return nil
}

func nodeID(nodes []Node, addr string) string {
	for _, n := range nodes {
		if n.Addr == addr {
			return n.ID
		}
	}
	return ""
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// WaitFailover waits until the cluster has recovered from the death of a
// primary (killed with Stop): every live node sees it failed, its replica
// serves its slots, and the cluster state is ok everywhere. A failover takes
// NodeTimeout and then about a second; it waits at most 30s.
func (c *Cluster) WaitFailover(t testing.TB) {
	t.Helper()
	if err := c.waitHealthy(30 * time.Second); err != nil {
		t.Fatalf("no failover: %v", err)
	}
}

// A Migration moves one slot from the primary that serves it to another, as
// redis-cli --cluster reshard does, one step at a time, so that a test can
// run traffic between the steps: while keys are moved, the old primary
// answers ASK for the keys it no longer has; once it is finished, MOVED.
type Migration struct {
	c              *Cluster
	slot           int
	from, to       *Server
	fromID, toID   string
	moved, batches int
}

// Migrate starts moving slot to the primary to (IMPORTING on to, MIGRATING
// on the slot's primary); nothing has moved yet.
func (c *Cluster) Migrate(t testing.TB, slot int, to *Server) *Migration {
	t.Helper()
	nodes := c.view(t)
	m := &Migration{c: c, slot: slot, from: c.Primary(t, slot), to: to}
	m.fromID, m.toID = nodeID(nodes, m.from.Addr), nodeID(nodes, to.Addr)
	if m.from == to {
		t.Fatalf("slot %d is already served by %s", slot, to.Addr)
	}
	s := strconv.Itoa(slot)
	must(t, to.Addr, "CLUSTER", "SETSLOT", s, "IMPORTING", m.fromID)
	must(t, m.from.Addr, "CLUSTER", "SETSLOT", s, "MIGRATING", m.toID)
	return m
}

// Move moves up to n of the slot's keys (MIGRATE … KEYS) and returns how
// many it moved.
func (m *Migration) Move(t testing.TB, n int) int {
	t.Helper()
	v, err := Do(m.from.Addr, "CLUSTER", "GETKEYSINSLOT", strconv.Itoa(m.slot), strconv.Itoa(n))
	if err != nil {
		t.Fatalf("GETKEYSINSLOT: %v", err)
	}
	keys, _ := v.([]any)
	if len(keys) == 0 {
		return 0
	}
	host, port, _ := net.SplitHostPort(m.to.Addr)
	args := []string{"MIGRATE", host, port, "", "0", "5000", "KEYS"}
	for _, k := range keys {
		args = append(args, k.(string))
	}
	must(t, m.from.Addr, args...)
	m.moved += len(keys)
	m.batches++
	return len(keys)
}

// Finish moves the keys left and gives the slot to its new primary (SETSLOT
// NODE, on the new primary first, then the old, then the others). It
// returns how many keys the migration moved in all.
func (m *Migration) Finish(t testing.TB) int {
	t.Helper()
	for m.Move(t, 100) > 0 {
	}
	s := strconv.Itoa(m.slot)
	must(t, m.to.Addr, "CLUSTER", "SETSLOT", s, "NODE", m.toID)
	must(t, m.from.Addr, "CLUSTER", "SETSLOT", s, "NODE", m.toID)
	for _, n := range m.c.view(t) {
		if n.Primary && !n.Failed && n.Addr != m.to.Addr && n.Addr != m.from.Addr {
			must(t, n.Addr, "CLUSTER", "SETSLOT", s, "NODE", m.toID)
		}
	}
	if err := m.c.waitHealthy(10 * time.Second); err != nil {
		t.Fatalf("after the migration: %v", err)
	}
	return m.moved
}

func must(t testing.TB, addr string, args ...string) {
	t.Helper()
	if _, err := Do(addr, args...); err != nil {
		t.Fatalf("%s: %v: %v", addr, args, err)
	}
}

// Redirects returns how many MOVED and ASK replies the live nodes have sent
// so far (INFO errorstats): the server's own count of the redirects its
// clients had to follow.
func (c *Cluster) Redirects(t testing.TB) (moved, ask int) {
	t.Helper()
	for _, s := range c.live() {
		info, err := text(s.Addr, "INFO", "errorstats")
		if err != nil {
			t.Fatalf("%s: INFO errorstats: %v", s.Addr, err)
		}
		moved += errorCount(info, "MOVED")
		ask += errorCount(info, "ASK")
	}
	return moved, ask
}

// errorCount reads errorstat_<prefix>:count=N from INFO errorstats.
func errorCount(info, prefix string) int {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "errorstat_"+prefix+":count="); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// Detach cuts replica off its primary's writes, as a replica that has
// fallen behind: it drops its link to the primary and cannot make a new one
// (its masteruser is a user the primary does not have), so everything its
// primary acknowledges from now on exists on the primary alone. It stays a
// replica, and takes over if its primary dies, without those writes.
func (c *Cluster) Detach(t testing.TB, replica *Server) {
	t.Helper()
	must(t, replica.Addr, "CONFIG", "SET", "masteruser", "no-such-user")
	must(t, replica.Addr, "CONFIG", "SET", "masterauth", "no-such-password")
	must(t, replica.Addr, "CLIENT", "KILL", "TYPE", "master")
	deadline := time.Now().Add(5 * time.Second)
	for {
		repl, err := text(replica.Addr, "INFO", "replication")
		if err == nil && strings.Contains(repl, "master_link_status:down") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still replicates: %v\n%s", replica.Addr, err, repl)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
