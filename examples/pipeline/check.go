package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/retrykit/retry/dlq"
)

// check verifies what the run promises, against three independent records —
// the jobs table, the dead letter queue and the mail server's deliveries —
// prints the verdicts, and returns an error if one failed. Duplicates are
// expected with -no-claim: that is what the flag shows.
func (wd *world) check(ctx context.Context, w io.Writer, out outcome, statuses map[string]int, noClaim bool) error {
	ended := out.Done + out.Partial + out.DeadLettered
	letters, err := wd.lettersOfDeadJobs(ctx, out.DeadLettered)
	if err != nil {
		return err
	}
	emails, note, err := wd.emailsMatchOutcomes(ctx, out.emailsPerJob)
	if err != nil {
		return err
	}
	checks := []struct {
		ok   bool
		text string
	}{
		{ended == out.Jobs, fmt.Sprintf("every job ended in exactly one outcome: %d + %d + %d = %d",
			out.Done, out.Partial, out.DeadLettered, out.Jobs)},
		{letters == "", "one dead letter per dead-lettered job" + letters},
		{emails == "", "an email delivered to every done job and to no other" + emails + note},
		{out.DuplicateEmails == 0, fmt.Sprintf("no email delivered twice (%d duplicates)", out.DuplicateEmails)},
		{out.duplicateGenerations == 0, fmt.Sprintf("no answer generated (and billed) twice (%d duplicates)", out.duplicateGenerations)},
	}
	if ended != out.Jobs {
		checks[0].text += fmt.Sprintf(" (statuses: %v)", statuses)
	}
	fmt.Fprintln(w, "checks:")
	var failed error
	for i, c := range checks {
		mark := "ok"
		switch {
		case c.ok:
		case noClaim && (i == 2 || i == 3): // the emails' checks: what -no-claim shows
			mark = "FAILED (as expected with -no-claim)"
		default:
			mark = "FAILED"
			failed = errors.Join(failed, errors.New(c.text))
		}
		fmt.Fprintf(w, "  %s %s\n", mark, c.text)
	}
	return failed
}

// lettersOfDeadJobs returns "" if the queue holds exactly one letter per
// dead-lettered job, the one the job's row names; otherwise what is wrong.
func (wd *world) lettersOfDeadJobs(ctx context.Context, dead int) (string, error) {
	letters, err := wd.letters.List(ctx, dlq.Filter{})
	if err != nil {
		return "", err
	}
	rows, err := wd.jobs.db.QueryContext(ctx, `SELECT id, coalesce(letter_id, '') FROM jobs WHERE status = ?`, statusDead)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	byJob := map[string]string{}
	for _, l := range letters {
		byJob[l.Job.ID] = l.ID
	}
	for rows.Next() {
		var id int
		var letter string
		if err := rows.Scan(&id, &letter); err != nil {
			return "", err
		}
		if byJob[strconv.Itoa(id)] != letter || letter == "" {
			return fmt.Sprintf(": job %d's letter %q is not in the queue", id, letter), nil
		}
	}
	if len(letters) != dead {
		return fmt.Sprintf(": %d letters for %d dead-lettered jobs", len(letters), dead), nil
	}
	return "", rows.Err()
}

// emailsMatchOutcomes returns "" if the mail server delivered the email of
// every done job, and of no partial or dead-lettered one; otherwise the first
// job that breaks the rule. A job dead-lettered with its claim still held
// (the email's fate unknown after every delivery) may have got it: those are
// counted in the returned note instead.
func (wd *world) emailsMatchOutcomes(ctx context.Context, perJob map[int]int) (problem, note string, err error) {
	rows, err := wd.jobs.db.QueryContext(ctx, `SELECT id, status, coalesce(email_status, '') FROM jobs ORDER BY id`)
	if err != nil {
		return "", "", err
	}
	defer rows.Close()
	unknown, got := 0, 0
	for rows.Next() {
		var id int
		var status, email string
		if err := rows.Scan(&id, &status, &email); err != nil {
			return "", "", err
		}
		n := perJob[id]
		switch {
		case status == statusDead && email == "sending":
			unknown++
			got += min(n, 1)
		case problem == "" && (status == statusDone) != (n > 0):
			problem = fmt.Sprintf(": job %d is %s and got %d email(s)", id, status, n)
		}
	}
	if unknown > 0 {
		note = fmt.Sprintf(" (%d of the %d jobs dead-lettered with the email's fate unknown got it)", got, unknown)
	}
	return problem, note, rows.Err()
}
