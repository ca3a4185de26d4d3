// Package rediswait runs a write script on Redis and acknowledges it only
// once replicas have it: the durability setting (Config.Replicas) of the
// Redis-backed stores (idempotency/redis, dlq/redis, breaker/redis).
//
// Redis replicates asynchronously: a primary answers a write before any
// replica has it, so a primary that dies then takes the write with it, and
// the replica that takes over never had it. WAIT numreplicas timeout blocks
// until that many replicas acknowledged every write the same connection sent
// before it, and returns how many did. So the script and the WAIT go in one
// pipeline, on one connection to the primary that serves the script's keys:
// with a *goredis.ClusterClient, the primary of the first key's slot, and on
// a MOVED or ASK redirect (a slot being migrated) the node it names. go-redis
// routes a command without keys, as WAIT is, to any node, so a WAIT sent
// through the cluster client would wait for another connection's writes, or
// none.
//
// A write that fewer replicas acknowledged in time is reported as an error:
// not acknowledged. It may still have been applied on the primary, and
// reach its replicas later.
package rediswait

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// MaxWait is the longest a write waits for its replicas when its context
// has no earlier deadline.
const MaxWait = time.Second

// hops bounds the redirects one write follows, and how often it is sent
// again after TRYAGAIN (its keys split by a slot migration in progress),
// backing off from 10ms to 100ms.
const hops = 16

// Supported reports whether Run can pin a write and its WAIT to one
// connection on c: a *goredis.Client or a *goredis.ClusterClient.
func Supported(c any) bool {
	switch c.(type) {
	case *goredis.Client, *goredis.ClusterClient:
		return true
	}
	return false
}

// Run runs script on c with keys and args, as script.Run does, and with n >
// 0 waits for n replicas to acknowledge it, at most MaxWait or until ctx's
// deadline. Fewer acknowledgements are an error on the returned command. c
// must be Supported when n > 0.
func Run(ctx context.Context, c goredis.Scripter, n int, script *goredis.Script, keys []string, args ...any) *goredis.Cmd {
	if n <= 0 {
		return script.Run(ctx, c, keys, args...)
	}
	timeout := waitFor(ctx)
	node, err := primary(ctx, c, keys[0])
	asking := false
	for hop := 0; err == nil; hop++ {
		cmd, acked := pipelined(ctx, node, asking, script, keys, args, n, timeout)
		addr, redirect := redirected(cmd.Err())
		switch {
		case redirect && hop < hops:
			_, asking = goredis.IsAskError(cmd.Err())
			node, err = nodeAt(ctx, c, addr)
			continue
		case goredis.IsTryAgainError(cmd.Err()) && hop < hops:
			if sleep(ctx, min(10*time.Millisecond<<min(hop, 4), 100*time.Millisecond)) != nil {
				return cmd
			}
			continue
		case cmd.Err() != nil && !errors.Is(cmd.Err(), goredis.Nil):
			reload(ctx, c, cmd.Err())
		case acked.Err() != nil:
			cmd.SetErr(fmt.Errorf("waiting for %d replica(s): %w (the write may be applied)", n, acked.Err()))
		case acked.Val() < int64(n):
			cmd.SetErr(fmt.Errorf("the write reached %d of %d replica(s) within %v (it may be applied, and may be lost in a failover)", acked.Val(), n, timeout))
		}
		return cmd
	}
	cmd := goredis.NewCmd(ctx)
	cmd.SetErr(err)
	return cmd
}

// waitFor is WAIT's timeout: MaxWait, or less to end by ctx's deadline, but
// at least a millisecond (WAIT's 0 waits for ever).
func waitFor(ctx context.Context) time.Duration {
	d := MaxWait
	if deadline, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(deadline))
	}
	return max(d, time.Millisecond).Truncate(time.Millisecond)
}

// pipelined sends [ASKING], the script, and WAIT on one connection of node;
// on NOSCRIPT, again with the script's body.
func pipelined(ctx context.Context, node *goredis.Client, asking bool, script *goredis.Script, keys []string, args []any, n int, timeout time.Duration) (*goredis.Cmd, *goredis.IntCmd) {
	send := func(eval func(goredis.Pipeliner) *goredis.Cmd) (*goredis.Cmd, *goredis.IntCmd) {
		pipe := node.Pipeline()
		if asking {
			pipe.Do(ctx, "asking")
		}
		cmd := eval(pipe)
		acked := goredis.NewIntCmd(ctx, "wait", n, timeout.Milliseconds())
		_ = pipe.Process(ctx, acked) // read within the client's ReadTimeout, 3s by default
		_, _ = pipe.Exec(ctx)        // each command carries its own error
		return cmd, acked
	}
	cmd, acked := send(func(p goredis.Pipeliner) *goredis.Cmd { return script.EvalSha(ctx, p, keys, args...) })
	if cmd.Err() != nil && goredis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		cmd, acked = send(func(p goredis.Pipeliner) *goredis.Cmd { return script.Eval(ctx, p, keys, args...) })
	}
	return cmd, acked
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// primary returns the client of the node that serves key.
func primary(ctx context.Context, c goredis.Scripter, key string) (*goredis.Client, error) {
	switch c := c.(type) {
	case *goredis.Client:
		return c, nil
	case *goredis.ClusterClient:
		return c.MasterForKey(ctx, key)
	}
	return nil, errors.New("waiting for replicas needs a *goredis.Client or a *goredis.ClusterClient")
}

func redirected(err error) (string, bool) {
	if addr, ok := goredis.IsMovedError(err); ok {
		return addr, true
	}
	return goredis.IsAskError(err)
}

// nodeAt returns the cluster's client of the node at addr, after reloading
// the cluster's map (a redirect means it changed).
func nodeAt(ctx context.Context, c goredis.Scripter, addr string) (*goredis.Client, error) {
	cc, ok := c.(*goredis.ClusterClient)
	if !ok {
		return nil, fmt.Errorf("redirected to %s by a server that is not a cluster's", addr)
	}
	var mu sync.Mutex
	var found *goredis.Client
	err := cc.ForEachShard(ctx, func(_ context.Context, n *goredis.Client) error {
		if n.Options().Addr == addr {
			mu.Lock()
			found = n
			mu.Unlock()
		}
		return nil
	})
	if err == nil && found == nil {
		err = fmt.Errorf("redirected to %s, a node the cluster's map does not have yet", addr)
	}
	return found, err
}

// reload has a cluster client read the cluster's map again after a failed
// write: the primary it wrote to may have died and been replaced, and only
// commands that go through the cluster client itself tell it so.
func reload(ctx context.Context, c goredis.Scripter, err error) {
	var rerr goredis.Error
	if cc, ok := c.(*goredis.ClusterClient); ok && !errors.As(err, &rerr) {
		cc.ReloadState(ctx)
	}
}
