// Package chaos injects faults into a program's own calls, in its tests, to
// prove a retry configuration before production does: errors, latency,
// throttling, connection faults, broken bodies and made-up answers, into
// functions (Wrap, WrapValue), HTTP (Scenario.Transport) and gRPC (the
// grpcretry module's Chaos interceptor).
//
// A Scenario is built from a Config: rules, asked in order for each call,
// each with a fault and when it applies — at a rate, by a script ("503,
// 503, then 200"), on a schedule ("429s for 10 s", or bursts), or any mix:
//
//	| fault                  | reaches the target | the caller sees                                      |
//	|------------------------|--------------------|------------------------------------------------------|
//	| Error(err)             | no                 | err                                                  |
//	| Latency(d)             | as the next rules  | the next rules' outcome, d later                     |
//	| LatencyTail(med, p99)  | as the next rules  | the same, after a heavy-tailed wait                  |
//	| Throttle(code, after)  | no                 | code with Retry-After (*classify.StatusError)        |
//	| Respond(code, body)    | no                 | that response (a StatusError if code >= 400, or nil) |
//	| Value(v)               | no                 | v from WrapValue                                     |
//	| Refused()              | no                 | dial tcp ...: connect: connection refused            |
//	| ResetBeforeSend()      | no                 | write tcp ...: write: connection reset by peer       |
//	| ResetAfterSend()       | yes, processed     | read tcp ...: read: connection reset by peer         |
//	| Timeout(d)             | yes, processed     | read tcp ...: i/o timeout, after d (or ctx's cause)  |
//	| Truncate(n)            | yes, processed     | a body cut after n bytes: io.ErrUnexpectedEOF        |
//	| Stall(n, d)            | yes, processed     | a body stopped after n bytes: i/o timeout after d    |
//
// Faults tell the truth. An error is built as the standard library builds
// the real one, and a fault that reaches the target really calls it: under
// ResetAfterSend the server processes the request, and the client gets the
// error of a connection reset before its answer, which it cannot tell from
// a reset before the request arrived — just as with a real network. Stats
// says how many calls the target processed and how many answers were lost,
// for a test to weigh against its side effects (no order charged twice).
//
// Zero values and defaults:
//
//	| setting          | zero value                                            |
//	|------------------|-------------------------------------------------------|
//	| Config           | no rules: every call reaches the target untouched     |
//	| Config.Seed      | seed 0: runs are reproducible unless you vary it      |
//	| Rule.Rate        | 1: every call within the schedule                     |
//	| Rule.Start       | from the moment New returned                          |
//	| Rule.For         | for ever                                              |
//	| Rule.Every       | once: no bursts                                       |
//	| Fault            | no fault (in a Script: the call goes through)         |
//	| *Scenario (nil)  | disabled: every call goes through                     |
//
// The same seed gives the same faults in the same order of calls: the n-th
// call's draws depend only on the seed, n and the rule, so concurrent calls
// draw without a lock (which call is the n-th is up to the scheduler).
// Latency, timeouts, stalls and schedules use real timers and time.Now, so
// under testing/synctest they take no real time. A Scenario is safe for
// concurrent use; disabled (Enable(false)) or nil, it costs one atomic load
// per call and allocates nothing.
//
// Bad rules are reported by New as a *retry.InvalidError (errors.Is(err,
// retry.ErrInvalid)) naming the field and its value.
package chaos
