// Command herd reproduces the experiment of the AWS Architecture Blog post
// "Exponential Backoff And Jitter" (2015) with the retry library's own
// schedule and jitters: N clients start at once and each must update one
// shared row by reading it and then writing it conditionally (optimistic
// concurrency: a write fails if the row changed since the client read it, and
// the client backs off and tries again). Every network hop takes
// |Normal(10 ms, 2 ms)|; backoff starts at 5 ms and is capped at 2 s.
//
// It prints, for each strategy and N, the writes the server saw ("calls") and
// when the last client finished ("time"), each the mean of many runs, and
// writes them to results.csv and herd.png beside this file. It runs on
// virtual time: a discrete-event simulation with no goroutine per client and
// no sleep, deterministic for a given -seed.
//
// Usage:
//
//	go run ./herd [-seed 1] [-runs 100] [-max 190] [-out dir]
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
	runs := flag.Int("runs", 100, "simulations averaged per point")
	maxN := flag.Int("max", 190, "largest number of clients (from 10, in steps of 10)")
	out := flag.String("out", sourceDir(), "directory for results.csv and herd.png")
	flag.Parse()
	if *runs < 1 || *maxN < 10 {
		fmt.Fprintln(os.Stderr, "herd: -runs must be at least 1 and -max at least 10")
		os.Exit(2)
	}
	if err := herd(config{seed: *seed, runs: *runs, clients: steps(10, *maxN, 10)}, *out, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "herd:", err)
		os.Exit(1)
	}
}

// herd runs the experiment, prints its tables to w and writes its files.
func herd(c config, dir string, w io.Writer) error {
	began := time.Now()
	points := experiment(c)
	fmt.Fprintf(w, "Thundering herd: N clients update one row with optimistic concurrency; mean of %d runs, seed %d.\n\n", c.runs, c.seed)
	printTable(w, "Calls (writes the server saw)", points, c.clients, "%.0f", func(p point) float64 { return p.calls })
	printTable(w, "Completion time (ms, when the last client finished)", points, c.clients, "%.0f", func(p point) float64 { return p.completionMS })
	csvPath, pngPath := filepath.Join(dir, "results.csv"), filepath.Join(dir, "herd.png")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeCSV(csvPath, points); err != nil {
		return err
	}
	if err := writePlot(pngPath, points, c); err != nil {
		return err
	}
	fmt.Fprintf(w, "Wrote %s and %s in %v.\n", csvPath, pngPath, time.Since(began).Round(time.Millisecond))
	return nil
}

// printTable prints one value of every point: a row per N, a column per
// strategy.
func printTable(w io.Writer, title string, points []point, clients []int, format string, value func(point) float64) {
	fmt.Fprintf(w, "%s\n%8s", title, "clients")
	for _, s := range strategies {
		fmt.Fprintf(w, " %13s", s.name)
	}
	fmt.Fprintln(w)
	for ci, n := range clients {
		fmt.Fprintf(w, "%8d", n)
		for si := range strategies {
			fmt.Fprintf(w, " %13s", fmt.Sprintf(format, value(points[si*len(clients)+ci])))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

// writeCSV writes one line per point under the header
// strategy,clients,calls,completion_ms.
func writeCSV(path string, points []point) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	fmt.Fprintln(f, "strategy,clients,calls,completion_ms")
	for _, p := range points {
		fmt.Fprintf(f, "%s,%d,%.1f,%.1f\n", p.strategy, p.clients, p.calls, p.completionMS)
	}
	return f.Close()
}

func steps(from, to, step int) []int {
	var s []int
	for n := from; n <= to; n += step {
		s = append(s, n)
	}
	return s
}

// sourceDir is the directory of this file when it is still where it was built
// (go run), so that the results land beside the program; else the working
// directory.
func sourceDir() string {
	if _, file, _, ok := runtime.Caller(0); ok {
		if _, err := os.Stat(file); err == nil {
			return filepath.Dir(file)
		}
	}
	return "."
}
