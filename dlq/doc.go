// Package dlq is a dead letter queue that works as a diagnosis tool, not a
// cemetery: a job that exhausted its retries is stored with every attempt's
// error, classification and wait; the queue alerts when it grows; letters
// are grouped by root cause; and after a fix they are replayed, attempts
// reset, each exactly once.
//
//	err := dlq.Do(ctx, retrier, queue, dlq.Job{ID: msg.ID, Source: "llm-jobs", Payload: msg.Body},
//		func(ctx context.Context) error { return process(ctx, msg) })
//	switch {
//	case err == nil, errors.Is(err, dlq.ErrDeadLettered):
//		msg.Ack() // done, or safe in the dead letter queue (dlq.LetterID("llm-jobs", msg.ID))
//	default:
//		msg.Nack() // cancelled, or the letter could not be stored: redeliver
//	}
//
// # Letters
//
// A Letter holds the Job (id, source queue, payload, metadata), why the
// retry loop gave up on it, the attempts, waits, first and last failure
// times, the last error and every attempt's error with its classification
// — whose class ("http 503", "connection reset") is the kind of failure,
// not the reason the loop stopped — and the wait that followed. Its ID is
// derived from the job's source and id, so dead-lettering a redelivered job
// twice stores one letter.
//
// Why the loop gave up, the letter's StopReason, is the stable label of the
// *retry.Error's Stop: the one list of reasons, policy.Stop (max-attempts,
// elapsed, deadline, budget, permanent, not-idempotent, class-limit,
// wait-too-long, key-required, limited, breaker-open, and any reason added
// to it later), or "failed" for an error that did not come from a retry
// loop. Every reason makes a letter but the caller's own cancellation
// (policy.StopCanceled): a call that a rate limiter or a circuit breaker
// refused did not do its job either. Select letters by reason with its
// label:
//
//	dlq.Filter{StopReason: policy.StopBudget.String()} // "budget"
//
// # Queues
//
// Queue is the interface; NewMemory returns the embedded, bounded implementation.
// Durable ones are nested modules, so that importing this package brings in
// no driver: github.com/retrykit/retry/dlq/sqlite (one machine, pure-Go
// SQLite) and github.com/retrykit/retry/dlq/redis (a fleet). All pass the
// conformance suite in package queuetest. Monitor wraps any Queue with
// alerts and an observer; GroupLetters groups letters by root cause;
// Summarize adds a queue's letters up — counts by source, stop reason and
// class, root-cause groups with a histogram over time — through the
// queue's own Summarizer where it has one (SQL in dlq/sqlite, an index in
// dlq/redis), so that 100,000 letters are not read to count them; Replay
// sends selected letters back to an Enqueuer. Filter.Limit and
// Filter.Offset page a List. The cmd/dlq tool operates the durable queues,
// and package dlq/dashboard shows one in the browser.
//
// Every queue replays a letter the same way, through ReplayClaimed: claim
// the letter (a claim lapses after the queue's claim timeout, so that a
// replayer that died does not hold it for ever), enqueue its job, then
// acknowledge (remove the letter) or release the claim. An author of a queue
// implements the three steps as a Claimer.
//
// # Encoding
//
// Encode writes a letter as one JSON object, version 2, so that an operator
// can read it with sqlite3's or Redis's JSON functions:
//
//	{"v":2, "id":"<16 hex>", "stop_reason":"max-attempts", "attempts":3,
//	 "job":{"id":"…", "source":"…", "payload":"<base64>", "metadata":{…}},
//	 "waited_ns":0, "elapsed_ns":0, "retry_after_ns":0,
//	 "first_failure":"<RFC 3339, UTC>", "last_failure":"<RFC 3339, UTC>",
//	 "last":<failure>, "failures":[<failure>, …]}
//
// where a failure is {"attempt":1, "type":"<Go type>", "error":"…",
// "verdict":"retry"|"stop"|"no opinion", "class":"http 503",
// "retry_after_ns":0, "limit":0, "timeout":false, "delay_ns":0, "at":"<RFC
// 3339, UTC>"}, "at" absent when the time of the failure is not known (it
// was added within version 2). Durations
// are integer nanoseconds. Fields may be added within a version (readers
// ignore unknown fields); any other change bumps the version. Decode reads
// versions 1 and 2 — version 1 named the stop reason "reason" — refuses a
// later one (ErrVersion) and anything that is not a valid letter
// (ErrCorrupt), and never panics. A reader must be as new as the newest
// writer: upgrade cmd/dlq and replayers before the workers. A stop reason
// is stored as its label, so a reader reads the letters of a reason added
// after it was built (their label is new to it, and filters select it).
//
// # Root causes
//
// A letter's Signature is its last error's innermost Go type, its class
// and its message normalised (timestamps, UUIDs, e-mail and IP addresses,
// hex ids, tokens and numbers replaced by placeholders); its
// Group is a short hash of it. "timeout after 3012ms on 10.0.0.7" and
// "timeout after 998ms on 10.0.0.9" are one group, an HTTP 401 another.
//
// # Alerts
//
// A Monitor counts the queue after every change through it (or every
// interval, with Watch) and reports each crossing of a threshold, up
// (firing) and back down (resolved) — once per crossing, not once per
// letter — to MonitorConfig.OnAlert and to slog. Growth is the count minus
// the lowest count seen within the window.
//
// # Observation
//
// A Monitor reports what a metrics or tracing module needs to the one
// observer of the library, MonitorConfig.Observer (package observe), so
// that this package knows no such module: observe.LetterAdded for each
// letter stored (Detail: the Letter, with its source, root-cause group and
// stop reason; Stop: its policy.Stop; Decision: its last failure's
// classification, whose Reason is its class), observe.LetterReplayed for
// each replay and its outcome (Detail: the letter's id; Err: nil, or why
// it stayed), and observe.QueueCounted for each count of the queue
// (Detail: the count). The observer is called synchronously, on the
// caller's goroutine, and must be quick and must not call the Monitor.
//
// # Invalid arguments
//
// Every function and method of the package given a nil context, queue,
// Enqueuer or operation, an empty letter id or a zero Monitor returns a
// *retry.InvalidError (errors.Is(err, retry.ErrInvalid)) before doing any
// work, and never panics.
//
// # Defaults
//
//	| setting                    | default                                         | change with                     |
//	|----------------------------|-------------------------------------------------|---------------------------------|
//	| Memory bound               | 10,000 letters; beyond, Put fails with ErrFull  | NewMemory(limit)                |
//	| size alert                 | more than 10 letters                            | Thresholds.Size (Off)           |
//	| growth alert               | more than 10 new letters within 1h              | Thresholds.Growth, .Window      |
//	| growth resolution          | 1/60 of the window                              | —                               |
//	| alert delivery             | slog.Default(), WARN firing / INFO resolved     | MonitorConfig.Logger, .OnAlert  |
//	| observer                   | none                                            | MonitorConfig.Observer          |
//	| groups attached to alerts  | the 5 largest (from Summarize)                  | —                               |
//	| histogram of a group       | 24 slices of the summary's span                 | —                               |
//	| encoding                   | JSON, version 2 (version 1 is read too)         | —                               |
//	| letter id                  | 16 hex digits of SHA-256(source, job id)        | —                               |
//	| group id                   | 12 hex digits of SHA-256(signature)             | —                               |
//	| failures kept per letter   | 64 (the first 32 and the last 32)               | —                               |
//	| error message kept         | 4096 bytes                                      | —                               |
//	| dead-lettered on           | every give-up but the caller's cancellation     | —                               |
//
// # The pieces, in short
//
// A job that exhausts its retries goes to a dead letter queue that works as a
// diagnosis tool, not a cemetery. dlq.Do(ctx, retrier, queue, job, op) (or
// dlq.Record after any retried call) stores every attempt's error,
// classification, time and wait, and returns an error matching
// dlq.ErrDeadLettered — the signal to acknowledge the message (the letter's id
// is dlq.LetterID(job.Source, job.ID)); a redelivered job is one letter. A
// call the rate limiter or a breaker refused is dead-lettered too; only a call
// its caller cancelled is not. A letter's stop reason is its *retry.Error's
// Stop label (max-attempts, budget, limited, breaker-open, … — the
// list above), or failed for an error that did not come
// from a retry loop; dlq.Filter{StopReason: policy.StopBudget.String()}
// selects by it. dlq.Monitor alerts (OnAlert + slog) once per crossing of a size or
// growth threshold, and reports each letter stored, each replay and each count
// to its observer (dlq.MonitorConfig.Observer: observe.LetterAdded,
// LetterReplayed, QueueCounted); dlq.GroupLetters turns 5,000
// dead jobs into their few root causes (messages with ids, numbers, UUIDs,
// addresses and timestamps normalised away); dlq.Replay sends selected
// letters (by id, group or all) back with attempts reset, each exactly once,
// removing a letter only when its enqueue succeeded, and reporting a replay
// whose claim lapsed meanwhile (ReplayReport.Lapsed, ErrClaimLapsed) instead
// of calling it done. Queues: dlq.NewMemory (in the process), dlq/sqlite (one
// machine, pure Go: a SIGKILLed writer loses no acknowledged letter — tested;
// power loss rests on synchronous=FULL — not tested) and dlq/redis (a fleet,
// atomic moves to and from Redis lists; AOF with appendfsync always kept every
// acknowledged letter across a SIGKILL of redis-server) — nested modules, all
// passing dlq/queuetest and sharing one replay protocol (dlq.ReplayClaimed).
// cmd/dlq (stats, ls, show, replay, purge, --json; dlq --help
// lists them; purge --all asks first, or takes --yes) operates both.
//
//	| setting | default | change with |
//	| --- | --- | --- |
//	| memory queue bound | 10,000 letters (then `ErrFull`, never a silent drop) | `dlq.NewMemory(n)` |
//	| size alert | more than 10 letters | `Thresholds.Size` (`dlq.Off`) |
//	| growth alert | more than 10 new letters within 1 h | `Thresholds.Growth`, `.Window` |
//	| alert delivery | `slog.Default()`: WARN firing, INFO resolved; plus the 5 largest causes | `MonitorConfig.Logger`, `.OnAlert` |
//	| observation | none | `MonitorConfig.Observer` |
//	| letter encoding | JSON, version 2 (version 1 read) | — |
//	| kept per letter | 64 attempts (first and last 32), 4 KiB per error message | — |
//	| replay claim | lapses after 5 min (a replayer that died) | `Config.ClaimTimeout` (sqlite, redis) |
//	| SQLite | WAL, `synchronous=FULL`, busy timeout 5 s | `sqlite.Config.BusyTimeout` |
//	| Redis keys | `{dlq}:letters`, `:order`, `:seq`, `:claim:<id>`; source list = the source's name | `redis.Config.Prefix`, `.SourceKey` |
package dlq
