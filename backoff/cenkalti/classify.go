package cenkalti

import (
	cbackoff "github.com/cenkalti/backoff/v4"
	"github.com/retrykit/retry/classify"
)

// Classify stops on an error that carries v4's permanent marker — a
// *backoff.PermanentError, made by backoff.Permanent — anywhere in its chain,
// as v4's Retry does; it has no opinion on any other error. Like
// classify.Default it walks the chain through both forms of Unwrap, without
// reflection or allocation.
//
// Code that moves from v4 keeps returning backoff.Permanent(err) for what must
// not be retried: with Classify among the retry loop's classifiers, before
// classify.Default, those errors still stop at once.
func Classify(err error) classify.Decision {
	if marked(err) {
		return classify.Decision{Verdict: classify.Stop, Reason: classify.ReasonMarkedPermanent}
	}
	return classify.Decision{}
}

func marked(err error) bool {
	for err != nil {
		switch e := err.(type) {
		case *cbackoff.PermanentError: // before Unwrap: it has one
			return true
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range e.Unwrap() {
				if marked(e) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}
