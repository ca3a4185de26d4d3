package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/retrykit/retry/dlq"
)

// events counts what the workers saw, for the summary. It is safe for
// concurrent use.
type events struct {
	mu         sync.Mutex
	crashes    [crashPoints + 1]int
	duplicates int       // deliveries of jobs that had already ended
	orphans    [2][2]int // claims found held: [left by a dead worker, by an unknown fate][not delivered, delivered]
	unknown    int       // deliveries that could not tell whether the email went out
	unknownDLQ int       // of them, the last ones the queue allowed: dead-lettered
	alerts     int       // support alerts: emails that failed for good
	firstAlert struct {
		job  int
		text string
	}
	dlqAlerts []dlq.Alert
}

// leftUnacknowledged counts a delivery whose message is delivered again.
func (e *events) leftUnacknowledged(c crash, unknown bool) {
	e.mu.Lock()
	if unknown {
		e.unknown++
	} else {
		e.crashes[c]++
	}
	e.mu.Unlock()
}

func (e *events) unknownDeadLettered() {
	e.mu.Lock()
	e.unknownDLQ++
	e.mu.Unlock()
}

func (e *events) duplicate() {
	e.mu.Lock()
	e.duplicates++
	e.mu.Unlock()
}

func (e *events) orphanClaim(unknown, delivered bool) {
	e.mu.Lock()
	e.orphans[index(unknown)][index(delivered)]++
	e.mu.Unlock()
}

func index(b bool) int {
	if b {
		return 1
	}
	return 0
}

// supportAlert is where a real worker pages support: the user has the result
// in the app but no email. The example counts them and keeps the alert of the
// lowest job id, so that the output does not depend on scheduling.
func (e *events) supportAlert(job, attempts int, cause string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.alerts++
	if e.firstAlert.job == 0 || job < e.firstAlert.job {
		e.firstAlert.job = job
		e.firstAlert.text = fmt.Sprintf("support alert: job %d: email failed after %d attempt(s): %s", job, attempts, cause)
	}
}

// dlqAlert receives the dead letter queue Monitor's alerts (its OnAlert).
func (e *events) dlqAlert(_ context.Context, a dlq.Alert) {
	e.mu.Lock()
	e.dlqAlerts = append(e.dlqAlerts, a)
	e.mu.Unlock()
}
