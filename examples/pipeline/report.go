package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/retrykit/retry/dlq"
)

// totals is the last line of the output. The outcomes come from the jobs
// table; llm_calls, llm_generations and emails_sent from what the fake
// servers received and did.
type totals struct {
	Jobs            int `json:"jobs"`
	Done            int `json:"done"`
	Partial         int `json:"partial"`
	DeadLettered    int `json:"dead_lettered"`
	LLMCalls        int `json:"llm_calls"`
	LLMGenerations  int `json:"llm_generations"` // billed: a replay of a keyed generation is not
	EmailsSent      int `json:"emails_sent"`
	DuplicateEmails int `json:"duplicate_emails"` // emails delivered beyond the first of a job
}

// outcome is what run returns: the totals, the emails the mail server
// delivered per job, and the generations the gateway billed beyond the first
// of a job.
type outcome struct {
	totals
	emailsPerJob         map[int]int
	duplicateGenerations int
}

// report prints the summary and, last, the JSON line, and returns the
// totals; its error says which check failed.
func (wd *world) report(ctx context.Context, w io.Writer, cfg config, st [3]step, took time.Duration) (outcome, error) {
	out, statuses, err := wd.totals(ctx, cfg.jobs)
	if err != nil {
		return out, err
	}
	fmt.Fprintf(w, "pipeline: %d jobs, fail rate %v, seed %d, %d workers; %v%% of first deliveries die unacknowledged\n",
		cfg.jobs, cfg.failRate, cfg.seed, cfg.workers, cfg.redeliver*100)
	fmt.Fprintf(w, "policies: the presets with %d attempts each, exponential backoff with full jitter, every wait ÷%d\n",
		attempts, cfg.speed)
	for _, s := range st {
		s.describe(w)
	}
	sections := []func(context.Context, io.Writer, outcome) error{wd.outcomes, wd.servers, wd.redeliveries, wd.deadLetters}
	for _, f := range sections {
		if err := f(ctx, w, out); err != nil {
			return out, err
		}
	}
	checkErr := wd.check(ctx, w, out, statuses, cfg.noClaim)
	where := wd.path + " (removed at exit; keep it with -db)"
	if cfg.dbPath != "" {
		where = wd.path
	}
	fmt.Fprintf(w, "took %v; database %s\n", took.Round(time.Millisecond), where)
	line, _ := json.Marshal(out.totals)
	fmt.Fprintf(w, "%s\n", line)
	return out, checkErr
}

// totals reads the outcomes from the jobs table and the calls from the fakes.
func (wd *world) totals(ctx context.Context, jobs int) (outcome, map[string]int, error) {
	statuses, err := wd.countBy(ctx, `SELECT status, count(*) FROM jobs GROUP BY status`)
	if err != nil {
		return outcome{}, nil, err
	}
	out := outcome{totals: totals{Jobs: jobs, Done: statuses[statusDone], Partial: statuses[statusPartial],
		DeadLettered: statuses[statusDead]}}
	out.LLMCalls, _ = wd.gateway.calls.snapshot()
	out.LLMGenerations, out.duplicateGenerations, _ = wd.gateway.billed()
	out.emailsPerJob, _ = wd.mail.deliveries()
	for _, n := range out.emailsPerJob {
		out.EmailsSent += n
		out.DuplicateEmails += n - 1
	}
	return out, statuses, nil
}

// countBy runs a query of (label, count) rows.
func (wd *world) countBy(ctx context.Context, query string, args ...any) (map[string]int, error) {
	rows, err := wd.jobs.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return nil, err
		}
		m[k] = n
	}
	return m, rows.Err()
}

// outcomes prints the three outcomes as the jobs table records them.
func (wd *world) outcomes(ctx context.Context, w io.Writer, out outcome) error {
	done, err := wd.countBy(ctx, `SELECT CASE WHEN finish_reason = 'content_filter' THEN 'filtered'
		WHEN result = '' THEN 'empty' ELSE 'answered' END, count(*) FROM jobs WHERE status = ? GROUP BY 1`, statusDone)
	if err != nil {
		return err
	}
	// Why the emails of partial jobs failed, and how many attempts they made.
	partial, err := wd.countBy(ctx, `SELECT printf('%-30s email_attempts %s', last_error, CASE
		WHEN min(email_attempts) = max(email_attempts) THEN min(email_attempts)
		ELSE min(email_attempts) || '–' || max(email_attempts) END), count(*)
		FROM jobs WHERE status = ? GROUP BY last_error`, statusPartial)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "outcomes (from the jobs table):")
	fmt.Fprintf(w, "  done             %4d  answer saved, email sent; %d filtered and %d empty answers among them (final, not retried)\n",
		out.Done, done["filtered"], done["empty"])
	fmt.Fprintf(w, "  partial_success  %4d  answer saved, email failed: email_status 'failed', support alerted\n", out.Partial)
	for _, k := range largest(partial) {
		fmt.Fprintf(w, "                  %4d    %s\n", partial[k], k)
	}
	if out.Partial > 0 {
		fmt.Fprintf(w, "                          e.g. %s\n", wd.events.firstAlert.text)
	}
	why := "the LLM call (or the answer's write) failed for good"
	if n := wd.events.unknownDLQ; n > 0 {
		why += fmt.Sprintf(", or (%d) the email's fate stayed unknown", n)
	}
	fmt.Fprintf(w, "  dead_lettered    %4d  %s: dead letter queue\n", out.DeadLettered, why)
	return nil
}

// servers prints what the fakes received.
func (wd *world) servers(_ context.Context, w io.Writer, out outcome) error {
	llm, codes := wd.gateway.calls.snapshot()
	fmt.Fprintf(w, "llm gateway received %d calls: %s\n", llm, byCode(codes, map[int]string{429: " (with Retry-After)"}))
	_, _, replays := wd.gateway.billed()
	fmt.Fprintf(w, "  billed %d generations, %d duplicates; %d calls replayed a generation kept under their key (not billed)\n",
		out.LLMGenerations, out.duplicateGenerations, replays)
	sends, codes := wd.mail.calls.snapshot()
	_, lookups := wd.mail.deliveries()
	fmt.Fprintf(w, "mail server received %d sends: %s\n", sends, byCode(codes, nil))
	fmt.Fprintf(w, "  delivered %d emails to %d jobs, %d duplicates; %d lookups in its message log\n",
		out.EmailsSent, len(out.emailsPerJob), out.DuplicateEmails, lookups)
	return nil
}

// redeliveries prints where workers died and what their redeliveries found.
func (wd *world) redeliveries(_ context.Context, w io.Writer, _ outcome) error {
	e := wd.events
	total, parts := 0, []string{}
	for c := afterLLM; c <= beforeAck; c++ {
		total += e.crashes[c]
		parts = append(parts, fmt.Sprintf("%d %s", e.crashes[c], c))
	}
	fmt.Fprintf(w, "redelivered %d messages whose worker died:\n  %s\n", total, strings.Join(parts, ", "))
	fmt.Fprintf(w, "  %d found their job ended: dropped\n", e.duplicates)
	dead := e.orphans[0]
	fmt.Fprintf(w, "  %d found the email claimed by the dead worker: %d delivered (recorded, not resent), %d not (claim taken over, sent)\n",
		dead[0]+dead[1], dead[1], dead[0])
	if e.unknown == 0 {
		return nil
	}
	unsure := e.orphans[1]
	fmt.Fprintf(w, "redelivered %d messages whose email may have gone out (an answer lost, the message log silent):\n", e.unknown)
	fmt.Fprintf(w, "  %d found it delivered (recorded, not resent), %d not (claim taken over, sent)", unsure[1], unsure[0])
	if e.unknownDLQ > 0 {
		fmt.Fprintf(w, "; %d still unknown after %d deliveries: dead-lettered, claim kept", e.unknownDLQ, maxDeliveries)
	}
	fmt.Fprintln(w)
	return nil
}

// deadLetters prints the dead letter queue's alerts and root causes.
func (wd *world) deadLetters(ctx context.Context, w io.Writer, _ outcome) error {
	letters, err := wd.letters.List(ctx, dlq.Filter{})
	if err != nil {
		return err
	}
	groups := dlq.GroupLetters(letters)
	fmt.Fprintf(w, "dead letter queue: %d letters, %d root causes\n", len(letters), len(groups))
	for _, a := range wd.events.dlqAlerts {
		if a.Firing {
			fmt.Fprintf(w, "  alert: %s\n", a)
		}
	}
	// GroupLetters breaks ties by recency, which depends on scheduling here:
	// break them by signature instead, for a stable output.
	slices.SortStableFunc(groups, func(a, b dlq.Group) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Signature, b.Signature)
	})
	tried := attemptsByGroup(letters)
	for _, g := range groups[:min(len(groups), 5)] {
		fmt.Fprintf(w, "  %4d  %-13s %s, %s\n", g.Count, g.Example.StopReason, g.Example.Last.Error, tried[g.ID])
	}
	return nil
}

// attemptsByGroup describes the attempts the letters of each root-cause
// group made: "3 attempts", "1–3 attempts".
func attemptsByGroup(letters []dlq.Letter) map[string]string {
	lo, hi := map[string]int{}, map[string]int{}
	for _, l := range letters {
		g := l.Group()
		if n, ok := lo[g]; !ok || l.Attempts < n {
			lo[g] = l.Attempts
		}
		hi[g] = max(hi[g], l.Attempts)
	}
	out := map[string]string{}
	for g := range lo {
		switch {
		case lo[g] != hi[g]:
			out[g] = fmt.Sprintf("%d–%d attempts", lo[g], hi[g])
		case lo[g] == 1:
			out[g] = "1 attempt"
		default:
			out[g] = fmt.Sprintf("%d attempts", lo[g])
		}
	}
	return out
}

// largest returns the keys of m, largest count first.
func largest(m map[string]int) []string {
	return slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
}

// byCode lists counts by HTTP status, in order of status.
func byCode(codes map[int]int, notes map[int]string) string {
	var s []string
	for _, c := range slices.Sorted(maps.Keys(codes)) {
		s = append(s, fmt.Sprintf("%d × %d%s", codes[c], c, notes[c]))
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
