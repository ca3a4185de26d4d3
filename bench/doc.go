// Package bench measures the retry library side by side with the libraries
// people use today, so that "free when nothing fails, cheap when something
// does" is a number rather than a claim. It is its own module, so the peers
// it imports never become dependencies of the library.
//
// Every benchmark is named Benchmark<Case>/<impl>, with impl one of:
//
//	| impl      | module                               | how it is used                                          |
//	|-----------|--------------------------------------|---------------------------------------------------------|
//	| retry     | github.com/retrykit/retry            | one Retrier from New, shared                            |
//	| cenkalti4 | github.com/cenkalti/backoff/v4       | a prebuilt BackOff per goroutine (it is stateful)       |
//	| cenkalti7 | github.com/cenkalti/backoff/v7       | prebuilt options and BackOff per goroutine              |
//	| avast5    | github.com/avast/retry-go/v5         | one Retrier from New, shared                            |
//	| sethvargo | github.com/sethvargo/go-retry        | a new Backoff per call (a Backoff is single-use)        |
//	| failsafe  | github.com/failsafe-go/failsafe-go   | one RetryPolicy and Executor, shared                    |
//	| plain     | none                                 | a direct call, or a hand-written loop                   |
//
// The cases are Delay, DoSuccess, DoTwoRetries, DoParallel and Classify; see
// README.md for what each measures, how to run them and the latest results.
// The thundering-herd simulation is the program in ./herd.
package bench
