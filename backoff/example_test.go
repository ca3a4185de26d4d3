package backoff_test

import (
	"fmt"
	"time"

	"github.com/retrykit/retry/backoff"
)

func ExampleExponential() {
	b := backoff.Exponential{Base: 100 * time.Millisecond, Factor: 2, MaxDelay: time.Second}
	for n := 1; n <= 6; n++ {
		fmt.Println(n, b.Delay(n))
	}
	fmt.Println(10_000, b.Delay(10_000)) // saturates, never overflows
	// Output:
	// 1 100ms
	// 2 200ms
	// 3 400ms
	// 4 800ms
	// 5 1s
	// 6 1s
	// 10000 1s
}

func ExampleLinear() {
	b := backoff.Linear{Base: time.Second, Step: 500 * time.Millisecond, MaxDelay: 2 * time.Second}
	fmt.Println(b.Delay(1), b.Delay(2), b.Delay(3), b.Delay(4))
	// Output: 1s 1.5s 2s 2s
}

func ExampleConstant() {
	b := backoff.Constant(250 * time.Millisecond)
	fmt.Println(b.Delay(1), b.Delay(100))
	// Output: 250ms 250ms
}

func ExampleFunc() {
	// Any pure function of the attempt number is a schedule.
	fib := backoff.Func(func(n int) time.Duration {
		a, b := 1, 1
		for i := 1; i < n && b < 60; i++ {
			a, b = b, a+b
		}
		return time.Duration(a) * time.Second
	})
	fmt.Println(fib.Delay(1), fib.Delay(2), fib.Delay(3), fib.Delay(4), fib.Delay(5))
	// Output: 1s 1s 2s 3s 5s
}
