// Command ratelimit compares client-side rate limiting strategies in
// virtual time: C clients (10, 100, 1,000), each one sequential worker,
// share 6,000 jobs of one API call each against an API that admits 100
// requests a second (a token bucket of capacity 100, full at the start) and
// answers 429 with Retry-After: 1 beyond it. Every network hop takes 10 ms ±
// 2.5 ms; a throttled call waits the Retry-After plus full-jitter backoff
// (base 100 ms, cap 20 s) and gives up after 10 attempts.
//
// The strategies are retry with backoff only; the library's limit.Adaptive
// shared by every client and one per client, and shared with a slow start
// (AdaptiveConfig.Start: 10 a second, doubling while nothing is throttled); a faithful port of the AWS SDK
// for Go v2's adaptive limiter, shared and per client; and limit.Throttler
// shared. The library's limiters run their own code on the simulated clock
// (their Now field). A run is a discrete-event simulation, deterministic for
// a -seed, and the whole experiment takes seconds.
//
// It prints a table and writes results.csv and ratelimit.png beside this
// file.
//
// Usage:
//
//	go run ./ratelimit [-seed 1] [-jobs 6000] [-out dir]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

func main() {
	seed := flag.Uint64("seed", 1, "seed of every random number")
	jobs := flag.Int("jobs", 6000, "jobs shared by the clients")
	out := flag.String("out", sourceDir(), "directory for results.csv and ratelimit.png")
	flag.Parse()
	if *jobs < 1 {
		fmt.Fprintln(os.Stderr, "ratelimit: -jobs must be at least 1")
		os.Exit(2)
	}
	c := config{seed: *seed, jobs: *jobs, clients: []int{10, 100, 1000}}
	if err := experimentFiles(c, *out, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ratelimit:", err)
		os.Exit(1)
	}
}

// experimentFiles runs the experiment, prints its table to w and writes its
// files.
func experimentFiles(c config, dir string, w io.Writer) error {
	began := time.Now()
	rows := experiment(c)
	fmt.Fprintf(w, "Rate limit of %.0f rps shared by C clients, %d jobs, seed %d.\n\n", limitRPS, c.jobs, c.seed)
	printTable(w, rows)
	csvPath, pngPath := filepath.Join(dir, "results.csv"), filepath.Join(dir, "ratelimit.png")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeCSV(csvPath, rows); err != nil {
		return err
	}
	if err := writePlot(pngPath, rows, c); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nWrote %s and %s in %v.\n", csvPath, pngPath, time.Since(began).Round(time.Millisecond))
	return nil
}

const header = "strategy,scope,clients,calls,throttled_pct,goodput_pct_of_limit,completion_s,p99_job_latency_s,local_rejections"

func printTable(w io.Writer, rows []row) {
	fmt.Fprintf(w, "%-14s %-10s %7s %7s %10s %8s %11s %8s %9s %9s\n",
		"strategy", "scope", "clients", "calls", "throttled", "goodput", "completion", "p99 job", "refused", "exhausted")
	for _, r := range rows {
		fmt.Fprintf(w, "%-14s %-10s %7d %7d %9.1f%% %7.1f%% %10.1fs %7.1fs %9d %9d\n",
			r.strategy, r.scope, r.clients, r.calls, r.throttledPct, r.goodputPct, r.completionS, r.p99S, r.refused, r.exhausted)
	}
}

func writeCSV(path string, rows []row) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	fmt.Fprintln(f, header)
	for _, r := range rows {
		fmt.Fprintf(f, "%s,%s,%d,%d,%.2f,%.2f,%.2f,%.2f,%d\n",
			r.strategy, r.scope, r.clients, r.calls, r.throttledPct, r.goodputPct, r.completionS, r.p99S, r.refused)
	}
	return f.Close()
}

// sourceDir is the directory of this file when it is still where it was
// built (go run), so that the results land beside the program; else the
// working directory.
func sourceDir() string {
	if _, file, _, ok := runtime.Caller(0); ok {
		if _, err := os.Stat(file); err == nil {
			return filepath.Dir(file)
		}
	}
	return "."
}
