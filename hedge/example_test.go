package hedge_test

import (
	"fmt"
	"time"

	"github.com/retrykit/retry/hedge"
)

func ExampleFixed() {
	d := hedge.Fixed(10 * time.Millisecond)
	fmt.Println(d.Next(), d.Validate())
	// Output: 10ms <nil>
}

func ExampleNewAdaptive() {
	a, err := hedge.NewAdaptive(hedge.AdaptiveConfig{Window: 100})
	if err != nil {
		panic(err)
	}
	// 96 calls in 100 take 4ms, 4 take 300ms: the p95 is 4ms.
	for i := range 100 {
		lat := 4 * time.Millisecond
		if i%25 == 0 {
			lat = 300 * time.Millisecond
		}
		a.Observe(lat)
	}
	fmt.Println(a.Next().Round(100 * time.Microsecond))
	_, err = hedge.NewAdaptive(hedge.AdaptiveConfig{Percentile: 1.5})
	fmt.Println(err)
	// Output:
	// 4ms
	// hedge.AdaptiveConfig.Percentile = 1.5: must be in (0, 1), or 0 for the default 0.95
}
