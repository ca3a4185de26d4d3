// Package dashboard serves a dead letter queue's dashboard in the browser:
// an http.Handler to mount in an admin server, or run by `dlq serve`.
//
// The overview shows how many letters the queue holds and how fast it
// grows, whether it is alerting (as a dlq.Monitor with the same thresholds
// would), the letters by stop reason, source and class, and the root-cause
// groups: their count, class, first and last seen, and a histogram over
// time. Its numbers come from dlq.Summarize — from the queue's own SQL or
// index where it has one — not from reading every letter. A group's page
// lists its letters, a page at a time; a letter's page shows its job's
// metadata, its payload (JSON indented, at most 64 KiB) and every attempt
// with its error, class and wait. Filters (source, stop reason, class, time
// range) narrow every page.
//
// Replay and purge act on a letter, a group or the filtered letters. Each
// is a POST form that first shows a dry run — what would go — and asks to
// confirm; a replay then runs in the background at the pace the form gives
// (letters a second, at most 1000), through the library's adaptive limiter
// (limit.Adaptive), which slows it further when the destination answers
// with a 429, and its page reports what it did. No GET changes anything.
//
// # Safety
//
// Every form carries an anti-forgery token (signed with a secret of the
// process, valid for 12 hours), and a POST from another origin is refused
// (http.CrossOriginProtection: Sec-Fetch-Site, or Origin against Host).
// Every field a job's producer controls — error text, payload, metadata,
// job id, source — is escaped by html/template. The pages run no script:
// their Content-Security-Policy is default-src 'none' with the stylesheet
// from the same origin. WithToken makes every request present a token
// (bearer, or the password of HTTP basic authentication).
//
//	d, err := dashboard.New(queue, enqueuer, dashboard.WithToken(os.Getenv("DLQ_TOKEN")))
//	if err != nil { … }
//	defer d.Close()
//	mux.Handle("/dlq/", http.StripPrefix("/dlq", d))
//
// # Defaults
//
//	| setting                 | default                                     | change with              |
//	|-------------------------|---------------------------------------------|--------------------------|
//	| authentication          | none (mount it behind yours, or loopback)   | WithToken                |
//	| alert thresholds        | more than 10 letters, or 10 new within 1h   | WithThresholds           |
//	| replay                  | off when the Enqueuer is nil                | New's second argument    |
//	| replay pace             | 10 letters a second (at most 1000)          | the confirmation's form  |
//	| replays at once         | 4; the last 20 reports are kept             | —                        |
//	| page size               | 50 letters or groups                        | —                        |
//	| payload shown           | 64 KiB                                      | —                        |
//	| form lifetime           | 12 hours                                    | —                        |
package dashboard
