// Package jitter spreads a nominal retry delay at random, so that clients that
// failed together do not retry together (the thundering herd).
//
// A Jitter is a pure function of the nominal delay, the previous delay and a
// uniformly distributed random number that the caller supplies. It never draws
// randomness itself, so it is deterministic under test and safe for concurrent
// use.
//
//	| jitter          | delay for nominal d                      | when to use                              |
//	|-----------------|------------------------------------------|------------------------------------------|
//	| Full (default)  | uniform in [0, d)                        | almost always: least work for the server |
//	| Equal           | d/2 + uniform in [0, d/2)                | when some minimum wait matters           |
//	| Decorrelated    | min(MaxDelay, uniform in [Base, 3*prev)) | AWS's formula; grows from the last delay |
//	| Proportional(f) | uniform in [d*(1-f), d*(1+f))            | cenkalti/backoff's randomization factor  |
//	| None            | d                                        | tests and schedules that must be exact   |
//
// The formulas are those of the AWS Architecture Blog post "Exponential
// Backoff And Jitter" (2015); Proportional is cenkalti/backoff's
// RandomizationFactor.
//
// Randomness comes from a Source. The retry loop draws one number per call from
// its Source (Runtime by default: math/rand/v2's per-thread generator, with no
// lock) and derives the rest of that call's numbers from it with a cheap
// generator of its own. NewSeeded gives a deterministic Source for tests.
package jitter
