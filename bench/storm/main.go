// Command storm simulates retry storms on virtual time: a dependency stalls
// or loses half its capacity for 10 s, every caller's attempts time out,
// and the retries may keep its queue full after it comes back — a
// metastable failure, which outlasts its trigger.
//
// The dependency serves 1,000 requests a second (10 workers, 10 ms each)
// from one unbounded FIFO queue, and processes a request whose client has
// given up all the same (wasted work). The load is open: Poisson arrivals at
// 700 or 900 a second over 1,000 clients, each call's attempt timing out
// 1 s after it is sent; every failure is a timeout, and the calls are
// idempotent, so timeouts are retried. From t = 30 s to t = 40 s the
// dependency stalls (even the requests in service pause) or runs at half
// speed; a run lasts 240 s.
//
// The rows are the peers with their defaults (go-retryablehttp,
// cenkalti/backoff v4, avast/retry-go v5, gRPC's retry throttling and the
// AWS SDK for Go v2's retry quota, one per client or one for all) and the
// library: its default Retrier shared by the process, built per process or
// per call, with a ratio budget, with a limit.Adaptive taking timeouts as
// throttles, and a fleet of one Retrier per process sharing that limiter.
// The library's rows run its own policy, budget and limiter code.
//
// It prints, for every row and trigger, the recovery (how long after t = 40 s
// goodput, the calls answered within their timeout, stays at least 95 % of
// the load), the amplification (attempts sent ÷ requests offered), the
// share of wasted work and the peak queue — medians of the seeds — and
// writes results.csv (every run) and storm.png (goodput over time) beside
// this file.
//
// Usage:
//
//	go run ./storm [-seeds 3] [-rows no-retries,retry-fleet] [-out dir]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

func main() {
	seeds := flag.Int("seeds", 3, "runs of each row and scenario, seeded 1, 2, …")
	only := flag.String("rows", "", "comma-separated row names to run (default: every row)")
	out := flag.String("out", sourceDir(), "directory for results.csv and storm.png")
	flag.Parse()
	if *seeds < 1 {
		fmt.Fprintln(os.Stderr, "storm: -seeds must be at least 1")
		os.Exit(2)
	}
	c := config{scenarios: allScenarios, rows: selectRows(*only)}
	if len(c.rows) == 0 {
		fmt.Fprintf(os.Stderr, "storm: no row named in -rows %q\n", *only)
		os.Exit(2)
	}
	for s := range *seeds {
		c.seeds = append(c.seeds, uint64(s+1))
	}
	if err := experimentFiles(c, *out, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "storm:", err)
		os.Exit(1)
	}
}

// experimentFiles runs the experiment, prints its tables to w and writes
// its files.
func experimentFiles(c config, dir string, w io.Writer) error {
	began := time.Now()
	cells := experiment(c)
	ss := summarize(cells)
	fmt.Fprintf(w, "Retry storms: a 10 s trigger at t = 30 s, runs of %v; medians of %d seeds (recovery: median, [min–max]).\n", horizon, len(c.seeds))
	printTables(w, ss, c)
	printTargets(w, ss)
	csvPath, pngPath := filepath.Join(dir, "results.csv"), filepath.Join(dir, "storm.png")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeCSV(csvPath, cells); err != nil {
		return err
	}
	if err := writePlot(pngPath, cells, c); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nWrote %s and %s in %v.\n", csvPath, pngPath, time.Since(began).Round(time.Millisecond))
	return nil
}

func printTables(w io.Writer, ss []summary, c config) {
	for _, sc := range c.scenarios {
		fmt.Fprintf(w, "\n%s, λ = %.0f/s\n", sc.trig, sc.lambda)
		fmt.Fprintf(w, "%-16s %-10s %-22s %7s %8s %8s %8s %8s %7s\n",
			"row", "scope", "recovery", "amplif", "wasted", "peak q", "failed", "refused", "p99")
		for _, s := range ss {
			if s.sc != sc {
				continue
			}
			fmt.Fprintf(w, "%-16s %-10s %-22s %7.2f %7.1f%% %8d %7.1f%% %7.1f%% %6.1fs\n",
				s.row.name, s.row.scope, recoveryText(s), s.m.amplification, s.m.wastedPct, s.m.peak,
				s.m.failedPct, s.m.refusedPct, s.m.p99.Seconds())
		}
	}
}

// recoveryText is the median recovery and its range over the seeds.
func recoveryText(s summary) string {
	if s.seeds == 1 || s.recoveryLo == s.recoveryHi {
		return seconds(s.m.recovery)
	}
	return fmt.Sprintf("%s [%s–%s]", seconds(s.m.recovery), seconds(s.recoveryLo), seconds(s.recoveryHi))
}

func seconds(d time.Duration) string {
	if d == never {
		return "never"
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

const header = "row,scope,lambda,trigger,seed,amplification,recovery_s,wasted_pct,peak_queue,failed_pct,refused_pct,p99_s"

func writeCSV(path string, cells []cell) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	fmt.Fprintln(f, header)
	for _, c := range cells {
		rec := "never"
		if c.m.recovery != never {
			rec = fmt.Sprintf("%.1f", c.m.recovery.Seconds())
		}
		fmt.Fprintf(f, "%s,%s,%.0f,%s,%d,%.3f,%s,%.2f,%d,%.2f,%.2f,%.2f\n",
			c.row.name, c.row.scope, c.sc.lambda, c.sc.trig, c.seed, c.m.amplification, rec,
			c.m.wastedPct, c.m.peak, c.m.failedPct, c.m.refusedPct, c.m.p99.Seconds())
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

// selectRows returns the rows named in the comma-separated list, or every
// row for an empty one.
func selectRows(list string) []*row {
	rs := allRows()
	if list == "" {
		return rs
	}
	names := strings.Split(list, ",")
	return slices.DeleteFunc(rs, func(r *row) bool { return !slices.Contains(names, r.name) })
}
