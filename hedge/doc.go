// Package hedge provides the delays of hedged calls (retry.NewHedger):
// how long a call waits for an attempt before it starts another alongside.
//
// Dean and Barroso ("The Tail at Scale", CACM 56(2), 2013) describe the
// technique: send a request, and if it has not answered within the 95th
// percentile of its expected latency, send a second copy and use whichever
// answers first. The extra load is about 5%, and the tail shrinks by an
// order of magnitude when slowness is transient (a busy server, a pause)
// rather than in the request itself.
//
//	| delay       | waits                                    | learns |
//	|-------------|------------------------------------------|--------|
//	| Fixed(d)    | d, on every call                         | no     |
//	| Adaptive    | a percentile of recent successful calls' | yes    |
//	|             | latencies, within a floor and a cap      |        |
//
// Zero fields of an AdaptiveConfig take these defaults:
//
//	| field      | zero value means                                           |
//	|------------|------------------------------------------------------------|
//	| Percentile | 0.95: hedge the slowest 5% of calls                        |
//	| Floor      | 1ms                                                        |
//	| Cap        | 1s; also the delay until the first estimate (16 calls)     |
//	| Window     | 1024 calls between estimates; each halves older latencies' |
//	|            | weight                                                     |
//
// Any type with Next and Observe is a Delay. Delays validate themselves
// (Validate); retry.NewHedger reports a bad one as a *retry.InvalidError
// naming the field and its value.
package hedge
