// Command tabulate turns the output of the benchmarks of this module into the
// Markdown tables of bench/README.md: the median of every measure of every
// Benchmark<Case>/<impl>, its ratio to the fastest peer of the same case, and
// whether the library meets its targets.
//
//	go test -run '^$' -bench . -benchmem -count 5 . | tee bench.txt
//	go run ./tabulate < bench.txt
//
// Peers are every impl but retry and its variants (retry_*: the library) and
// plain (no library: for HTTPSuccess, the base transport alone).
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	results, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tabulate:", err)
		os.Exit(1)
	}
	if len(results) == 0 {
		fmt.Fprintln(os.Stderr, "tabulate: no benchmark results on standard input")
		os.Exit(1)
	}
	write(os.Stdout, results)
}

// result is the medians of one Benchmark<Case>/<impl> over its runs.
type result struct {
	bench, impl              string
	ns, bytes, allocs        float64
	nsRuns, bRuns, allocRuns []float64
}

// line matches "BenchmarkDelay/retry-2  123  4.5 ns/op  0 B/op  0 allocs/op".
var line = regexp.MustCompile(`^Benchmark(\w+)/(\w+)(?:-\d+)?\s+\d+\s+(.*)$`)

// parse reads go test -bench output and returns the medians, in the order the
// benchmarks first appear.
func parse(r io.Reader) ([]*result, error) {
	var order []*result
	byName := map[string]*result{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		key := m[1] + "/" + m[2]
		res := byName[key]
		if res == nil {
			res = &result{bench: m[1], impl: m[2]}
			byName[key] = res
			order = append(order, res)
		}
		fields := strings.Fields(m[3])
		for i := 0; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %v", key, fields[i], err)
			}
			switch fields[i+1] {
			case "ns/op":
				res.nsRuns = append(res.nsRuns, v)
			case "B/op":
				res.bRuns = append(res.bRuns, v)
			case "allocs/op":
				res.allocRuns = append(res.allocRuns, v)
			}
		}
	}
	for _, res := range order {
		res.ns, res.bytes, res.allocs = median(res.nsRuns), median(res.bRuns), median(res.allocRuns)
	}
	return order, sc.Err()
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// isPeer reports whether impl is a peer: not retry or a retry_ variant (the
// library; retryablehttp is a peer), and not plain.
func isPeer(impl string) bool {
	return impl != "retry" && !strings.HasPrefix(impl, "retry_") && impl != "plain"
}

// fastestPeer returns the peer of bench with the lowest median time.
func fastestPeer(results []*result, bench string) *result {
	var best *result
	for _, r := range results {
		if r.bench == bench && isPeer(r.impl) && (best == nil || r.ns < best.ns) {
			best = r
		}
	}
	return best
}

func find(results []*result, bench, impl string) *result {
	for _, r := range results {
		if r.bench == bench && r.impl == impl {
			return r
		}
	}
	return nil
}

// write prints one table of all results, then the targets.
func write(w io.Writer, results []*result) {
	fmt.Fprintln(w, "| benchmark | ns/op | B/op | allocs/op | × fastest peer |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|")
	for _, r := range results {
		ratio := "—"
		if best := fastestPeer(results, r.bench); best != nil {
			ratio = fmt.Sprintf("%.2f", r.ns/best.ns)
			if r == best {
				ratio = "1.00 (fastest peer)"
			}
		}
		fmt.Fprintf(w, "| %s/%s | %s | %.0f | %.0f | %s |\n", r.bench, r.impl, ns(r.ns), r.bytes, r.allocs, ratio)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| target | measured | met |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, t := range targets {
		if measured, met, ok := t.check(results); ok {
			fmt.Fprintf(w, "| %s | %s | %s |\n", t.name, measured, yesNo(met))
		}
	}
}

// ns formats a time with three significant digits, or as a whole number
// from 100 on.
func ns(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

// target is one of the library's targets.
type target struct {
	name string
	// check returns what was measured, whether it meets the target, and
	// false when the results lack what the target needs.
	check func(results []*result) (string, bool, bool)
}

// peerTarget is "<bench>/retry at most maxAllocs allocs and at most ratio × the fastest peer".
func peerTarget(bench string, maxAllocs, ratio float64) target {
	return target{
		name: fmt.Sprintf("%s/retry: ≤ %.0f allocs, ≤ %.2g × fastest peer", bench, maxAllocs, ratio),
		check: func(results []*result) (string, bool, bool) {
			ours, best := find(results, bench, "retry"), fastestPeer(results, bench)
			if ours == nil || best == nil {
				return "", false, false
			}
			got := ours.ns / best.ns
			return fmt.Sprintf("%.0f allocs, %.2f × %s (%s ns vs %s ns)", ours.allocs, got, best.impl, ns(ours.ns), ns(best.ns)),
				ours.allocs <= maxAllocs && got <= ratio, true
		},
	}
}

// timedPeers are the peers that, like the library, read the clock when a call
// starts (to bound its elapsed time), so that a failure can say how long the
// call took: cenkalti/backoff's ExponentialBackOff, and failsafe-go's
// execution. avast/retry-go and go-retry record no time.
var timedPeers = []string{"cenkalti4", "cenkalti7", "failsafe"}

// timedPeerTarget is peerTarget against the fastest of timedPeers: a like for
// like comparison, reported beside the target, not instead of it.
func timedPeerTarget(bench string, maxAllocs, ratio float64) target {
	return target{
		name: fmt.Sprintf("%s/retry: ≤ %.0f allocs, ≤ %.2g × the fastest peer that times its calls (%s)", bench, maxAllocs, ratio, strings.Join(timedPeers, ", ")),
		check: func(results []*result) (string, bool, bool) {
			ours := find(results, bench, "retry")
			var best *result
			for _, impl := range timedPeers {
				if r := find(results, bench, impl); r != nil && (best == nil || r.ns < best.ns) {
					best = r
				}
			}
			if ours == nil || best == nil {
				return "", false, false
			}
			got := ours.ns / best.ns
			return fmt.Sprintf("%.0f allocs, %.2f × %s (%s ns vs %s ns)", ours.allocs, got, best.impl, ns(ours.ns), ns(best.ns)),
				ours.allocs <= maxAllocs && got <= ratio, true
		},
	}
}

// overheadTarget is "<bench>/retry at most extraAllocs allocs more than
// plain, and an overhead (time above plain) at most ratio × every peer's".
func overheadTarget(bench string, extraAllocs, ratio float64) target {
	return target{
		name: fmt.Sprintf("%s/retry: ≤ plain + %.0f allocs, overhead ≤ %.2g × every peer's", bench, extraAllocs, ratio),
		check: func(results []*result) (string, bool, bool) {
			ours, plain := find(results, bench, "retry"), find(results, bench, "plain")
			if ours == nil || plain == nil {
				return "", false, false
			}
			met := ours.allocs <= plain.allocs+extraAllocs
			measured := fmt.Sprintf("+%.0f allocs; overhead %s ns", ours.allocs-plain.allocs, ns(ours.ns-plain.ns))
			for _, r := range results {
				if r.bench == bench && isPeer(r.impl) {
					got := (ours.ns - plain.ns) / (r.ns - plain.ns)
					measured += fmt.Sprintf(", %.2f × %s's (%s ns)", got, r.impl, ns(r.ns-plain.ns))
					met = met && got <= ratio
				}
			}
			return measured, met, true
		},
	}
}

var targets = []target{
	peerTarget("Delay", 0, 0.5),
	peerTarget("DoSuccess", 0, 0.7),
	timedPeerTarget("DoSuccess", 0, 0.7),
	peerTarget("DoTwoRetries", 1, 0.5),
	{
		name: "DoParallel/retry: no slower per op than serial DoSuccess/retry",
		check: func(results []*result) (string, bool, bool) {
			par, ser := find(results, "DoParallel", "retry"), find(results, "DoSuccess", "retry")
			if par == nil || ser == nil {
				return "", false, false
			}
			return fmt.Sprintf("%s ns vs %s ns", ns(par.ns), ns(ser.ns)), par.ns <= ser.ns, true
		},
	},
	overheadTarget("HTTPSuccess", 2, 0.5),
}
