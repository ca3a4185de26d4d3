package main

import (
	"strings"
	"testing"
)

const sample = `goos: linux
BenchmarkDelay/retry-2         	100	         4.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkDelay/retry-2         	100	         5.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkDelay/retry-2         	100	         9.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkDelay/cenkalti7-2     	100	        10.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkDelay/avast5-2        	100	        20.0 ns/op	       8 B/op	       1 allocs/op
BenchmarkDoSuccess/retry-2     	100	         5.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkDoSuccess/avast5-2    	100	         7.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkDoSuccess/plain-2     	100	         1.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkDoParallel/retry-2    	100	         2.5 ns/op	       0 B/op	       0 allocs/op
BenchmarkHTTPSuccess/retry-2   	100	       250 ns/op	     144 B/op	       1 allocs/op
BenchmarkHTTPSuccess/retryablehttp-2	100	       600 ns/op	     400 B/op	       6 allocs/op
BenchmarkHTTPSuccess/failsafehttp-2	100	      2150 ns/op	     865 B/op	      20 allocs/op
BenchmarkHTTPSuccess/plain-2   	100	       150 ns/op	     144 B/op	       1 allocs/op
PASS
`

func TestMediansRatiosAndTargets(t *testing.T) {
	results, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if got := find(results, "Delay", "retry").ns; got != 5 {
		t.Errorf("median of 4, 5 and 9 = %v, want 5", got)
	}
	if best := fastestPeer(results, "DoSuccess"); best.impl != "avast5" {
		t.Errorf("fastest DoSuccess peer = %s; plain is no peer", best.impl)
	}
	var out strings.Builder
	write(&out, results)
	for _, want := range []string{
		"| Delay/retry | 5 | 0 | 0 | 0.50 |",
		"| Delay/cenkalti7 | 10 | 0 | 0 | 1.00 (fastest peer) |",
		"| Delay/retry: ≤ 0 allocs, ≤ 0.5 × fastest peer | 0 allocs, 0.50 × cenkalti7 (5 ns vs 10 ns) | yes |",
		"| DoSuccess/retry: ≤ 0 allocs, ≤ 0.7 × fastest peer | 0 allocs, 0.71 × avast5 (5 ns vs 7 ns) | **no** |",
		"| DoParallel/retry: no slower per op than serial DoSuccess/retry | 2.5 ns vs 5 ns | yes |",
		"| HTTPSuccess/retry: ≤ plain + 2 allocs, overhead ≤ 0.5 × every peer's | +0 allocs; overhead 100 ns, 0.22 × retryablehttp's (450 ns), 0.05 × failsafehttp's (2000 ns) | yes |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "DoTwoRetries/retry:") {
		t.Errorf("a target without results is printed:\n%s", out.String())
	}
}
