// Package breaker holds two stages of the retry pipeline: circuit breakers
// (github.com/sony/gobreaker/v2) and a cooldown registry, each keyed by the
// call's Key (a target and an operation): retries handle a blip, a breaker
// handles a dependency that is down, and a cooldown stops asking a server
// that already said when to come back. Give them to a Retrier:
//
//	breakers, err := breaker.New(breaker.Config{Timeout: 30 * time.Second})
//	if err != nil {
//		return err
//	}
//	cooldowns, err := breaker.NewCooldowns(breaker.CooldownConfig{})
//	if err != nil {
//		return err
//	}
//	r, err := retry.New(retry.WithBreakers(breakers), retry.WithCooldowns(cooldowns))
//	if err != nil {
//		return err
//	}
//	return r.Do(breaker.WithKey(ctx, breaker.Key{Target: "api.example.com", Operation: "qwen3"}), op)
//
// Package httpretry sets each request's key to its (host, model), and
// package grpcretry to its (target, method); other calls set it with
// WithKey, or share the zero Key.
//
// # Placement
//
// Outside (the default, and the recommended placement): the breaker sees one
// logical call — the whole retried call — and counts its outcome once. While
// it is open a call is rejected at once: the operation is not invoked, no
// retry or sleep happens, and the call fails with retry.ErrBreakerOpen, its
// last error matching ErrOpen (or ErrTooManyRequests when half-open). Use it
// for a dependency whose failures are retried anyway: the breaker decides
// "should we try this dependency at all", the retry loop "this request
// failed, again?". A breaker without retries is a Retrier with
// retry.WithMaxAttempts(1).
//
// Config.PerAttempt: every attempt goes through the breaker, and every
// attempt's outcome counts. Use it when the breaker protects a resource that
// each attempt consumes (a connection pool, a rate-limited quota), or when
// several callers with different retry policies share one breaker and their
// attempts must weigh the same. A rejection ends the call.
//
// Either way the breaker counts as a failure exactly what the Retrier would
// retry: a timeout, a reset, a 503, an error no classifier recognises —
// never a 400 the caller caused, nor a permanent error, which count as
// successes (the dependency answered). A call the caller cancelled, or that
// sent nothing (a limiter refused it, a key it needed was missing, a
// cooldown stopped it), is not counted at all. An operation that panics, or
// exits its goroutine (runtime.Goexit, as t.FailNow does), counts as a
// failure, and the panic goes on. An open breaker's Counts read zero: it
// counts nothing while it rejects.
//
// Hedging (retry.NewHedger): outside, a hedged call takes one permit, its
// hedges included; per attempt, every attempt and hedge asks the breaker,
// and a hedge it refuses is not sent (observe.HedgeSkipped, policy.StopOpen).
//
// # Defaults
//
//	| setting     | zero value means                                                  |
//	|-------------|-------------------------------------------------------------------|
//	| MaxRequests | 1 probe while half-open; that many successes close the breaker    |
//	| Interval    | counts are cleared only when the state changes                    |
//	| Timeout     | 60s open before going half-open (gobreaker's default)             |
//	| ReadyToTrip | open after more than 5 consecutive failures (gobreaker's default) |
//	| PerAttempt  | false: around the whole retried call                              |
//	| MaxKeys     | 10,000 keys; a call for a new key past that runs without one      |
//	| NewCircuit  | a local gobreaker TwoStepCircuitBreaker per key                   |
//
// A key's breaker is made when the key is first seen: by NewCircuit, given
// the gobreaker settings named by the key (Key.String). While NewCircuit
// fails, the key's calls are refused with its error (retry.ErrBreakerOpen,
// nothing sent), and the next call tries again.
//
// # Cooldowns
//
// A server that answers 503 (or gRPC UNAVAILABLE) with a Retry-After has
// said when to come back. Cooldowns remembers it per key: every attempt to
// that key, from any call of any Retrier sharing the registry, waits until
// the cooldown ends before it is sent — or, when that is longer than the
// call can wait (the policy's MaxDelay, its MaxElapsed, the context's
// deadline), the call stops at once with retry.ErrWaitTooLong (or
// ErrElapsed, ErrDeadline), the time left in its RetryAfter, and nothing is
// sent; its last error, when it made no attempt, is a *CooldownError that
// says until when. A hedge is not sent to a key cooling down.
// Its zero values: 10,000 keys at most; a Retry-After longer than an hour is
// held for an hour.
//
// # Observation
//
// Breakers and cooldowns report through the observer of the call that moved
// them (retry.WithObserver), with the call's context: an
// observe.BreakerChanged event for each change of a breaker's state (a
// Transition), delivered once the breaker's lock is released, so that an
// observer may read State; an observe.CooldownStarted for each cooldown, and
// observe.CooldownWaited for each wait one imposed. State and Counts read a
// key's breaker at any time, for health endpoints.
//
// With many instances, the nested module github.com/retrykit/retry/breaker/redis
// keeps each key's breaker in Redis (Config.NewCircuit) so that a fleet opens
// together.
//
// # A breaker in a Retrier, in full
//
// Retries handle a blip; a breaker handles a dependency that is down.
// breaker.New(breaker.Config{…}) makes a set of sony/gobreaker/v2 breakers,
// one per call key, and retry.WithBreakers makes them a stage of the Retrier,
// around the retry loop:
//
//	breakers, err := breaker.New(breaker.Config{Timeout: 30 * time.Second}) // one breaker per call key
//	if err != nil {
//		return err
//	}
//	r, err := retry.New(retry.WithBreakers(breakers),
//		retry.WithObserver(observe.Func(func(ctx context.Context, e observe.Event) {
//			if t, ok := e.Detail.(breaker.Transition); ok && e.Kind == observe.BreakerChanged {
//				slog.WarnContext(ctx, "breaker changed state", "key", t.Key, "from", t.From, "to", t.To,
//					"failures", t.Counts.ConsecutiveFailures) // the counts that tripped it; Counts reads 0 once open
//			}
//		})))
//	if err != nil {
//		return err
//	}
//	payments := breaker.Key{Target: "payments"}
//	err = r.Do(breaker.WithKey(ctx, payments), charge) // one logical call: retried inside, counted once
//	if errors.Is(err, retry.ErrBreakerOpen) {
//		// rejected at once: not called, no retry, no sleep; degrade here
//	}
//	log.Printf("state=%v", breakers.State(payments))
//	return err
//
// In detail:
//
//   - Outside (default, recommended): the breaker sees one logical call and
//     counts its outcome once. Config.PerAttempt: every attempt goes
//     through it and counts — for a resource each attempt consumes, or callers
//     with different retry policies sharing one breaker. Either way a refusal
//     ends the call with retry.ErrBreakerOpen (its last error matching
//     breaker.ErrOpen, or breaker.ErrTooManyRequests when half-open): nothing
//     is sent, and no retry loop retries it.
//   - What counts as a failure is what the Retrier would retry: a 400 the caller
//     caused is a success for the breaker; a cancelled call, or one that sent
//     nothing (the limiter refused it, a required key was missing, a cooldown
//     stopped it), is not counted; an operation that panics is a failure.
//   - One breaker per key (breaker.Key{Target, Operation}, set with
//     breaker.WithKey; httpretry sets (host, model), grpcretry (target,
//     method)), made when the key is first seen; past MaxKeys, a new key runs
//     without one. Several Retriers given the same Breakers share each key's
//     breaker.
//   - State changes reach the observers of the call that moved them
//     (observe.BreakerChanged, whose Detail is a breaker.Transition) and
//     retry.WithLogger (WARN when one opens); State(key) and Counts(key)
//     read a key's breaker at any time (health endpoints, metrics). A fallback is
//     a test at the call (errors.Is(err, retry.ErrBreakerOpen)), where its type
//     is known.
//   - Cooldowns (breaker.NewCooldowns(breaker.CooldownConfig{}), given with
//     retry.WithCooldowns): a 503 (or gRPC UNAVAILABLE) with Retry-After puts
//     the call's key in cooldown. Every attempt to that key, from any call of any
//     Retrier sharing the registry, waits until the cooldown ends before it is
//     sent; when that is longer than the call can wait (MaxDelay, MaxElapsed,
//     the deadline), the call stops at once with retry.ErrWaitTooLong (or
//     ErrElapsed, ErrDeadline), the time left in its RetryAfter, and its last
//     error, if it made no attempt, a *breaker.CooldownError that says until
//     when — never mistaken for the server's answer. Nothing is sent, and other
//     keys go on. Bounded (10,000 keys), lock-free while nothing cools down;
//     observers hear observe.CooldownStarted and observe.CooldownWaited.
//   - A fleet (breaker/redis, its own module): with
//     Config.NewCircuit: redis.Circuit(store), each key's breaker state lives in
//     Redis through gobreaker's distributed breaker, so every instance opens,
//     probes and closes together. The Redis lock is held for the state update
//     only — never during the call — and no call waits on Redis longer than
//     OpTimeout per step, whatever the go-redis client's settings: with Redis
//     killed or hung (SIGSTOP), calls return in about 0.2 s and the breaker
//     counts locally until Redis answers again (gobreaker alone blocked them
//     5.6–10 s).
//
// In a table:
//
//	| breaker setting (`breaker.Config`, `breaker.CooldownConfig`) | default |
//	| --- | --- |
//	| `MaxRequests` (half-open probes) | 1 |
//	| `Timeout` (open → half-open) | 60 s |
//	| `ReadyToTrip` | more than 5 consecutive failures |
//	| `Interval` (closed-state count reset) | none: counts reset on state change |
//	| placement | outside the retry loop (`PerAttempt`: around every attempt) |
//	| keys with a breaker | 10,000 (`MaxKeys`) |
//	| cooldown keys / longest cooldown | 10,000 / 1 h (`CooldownConfig.MaxKeys`, `.MaxDelay`) |
//	| `breaker/redis`: lock TTL, lock wait, op timeout, recheck after an outage | 2 s, 100 ms, 1 s, 1 s |
package breaker
