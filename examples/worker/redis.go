package main

import (
	"fmt"
	"os"

	"github.com/retrykit/retry/internal/redistest"
)

// startRedis starts a redis-server for this program, the way the library's
// tests start theirs (internal/redistest): on a free loopback port,
// persistence off, in a fresh directory. stop kills it and removes the
// directory.
func startRedis() (srv *redistest.Server, stop func(), err error) {
	dir, err := os.MkdirTemp("", "worker-redis-")
	if err != nil {
		return nil, nil, err
	}
	srv, err = redistest.Launch(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("no -redis address given, and no redis-server could be started (install it, e.g. apt-get install redis-server): %w", err)
	}
	return srv, func() { srv.Stop(); os.RemoveAll(dir) }, nil
}
