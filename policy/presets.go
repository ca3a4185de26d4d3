package policy

import (
	"time"

	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/jitter"
)

// LLMCall is the policy for a call to a language model: three retries,
// exponential backoff from 2s to 60s with full jitter, strict classification
// (a generation is billed, so only failures known to be transient are
// retried), and Retry-After honoured up to 60s.
func LLMCall() Policy {
	return Policy{
		MaxAttempts: 4,
		MaxDelay:    60 * time.Second,
		Backoff:     backoff.Exponential{Base: 2 * time.Second, Factor: 2, MaxDelay: 60 * time.Second},
		Jitter:      jitter.Full{},
		Strict:      true,
	}
}

// DBWrite is the policy for a database write: three quick retries, 100ms to
// 1s with full jitter; its failures are almost always brief.
func DBWrite() Policy {
	return Policy{
		MaxAttempts: 4,
		MaxDelay:    time.Second,
		Backoff:     backoff.Exponential{Base: 100 * time.Millisecond, Factor: 2, MaxDelay: time.Second},
		Jitter:      jitter.Full{},
	}
}

// EmailSend is the policy for sending an email: three retries, 1s to 10s with
// full jitter, and a provider's Retry-After honoured up to 30s.
func EmailSend() Policy {
	return Policy{
		MaxAttempts: 4,
		MaxDelay:    30 * time.Second,
		Backoff:     backoff.Exponential{Base: time.Second, Factor: 2, MaxDelay: 10 * time.Second},
		Jitter:      jitter.Full{},
	}
}

// Payment is the policy for charging money: three retries with a long
// backoff (2s to 30s, full jitter), strict classification, and an idempotency
// key required on every call, so that a retry can never charge twice.
func Payment() Policy {
	return Policy{
		MaxAttempts: 4,
		MaxDelay:    60 * time.Second,
		Backoff:     backoff.Exponential{Base: 2 * time.Second, Factor: 2, MaxDelay: 30 * time.Second},
		Jitter:      jitter.Full{},
		Strict:      true,
		RequireKey:  true,
	}
}

// HealthCheck is the policy for a health check: one attempt, no retry — a
// probe that retries hides the failure it exists to report.
func HealthCheck() Policy {
	return Policy{MaxAttempts: 1}
}
