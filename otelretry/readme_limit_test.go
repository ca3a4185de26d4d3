package otelretry_test

import (
	"log"

	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/otelretry"
)

// observeSearchLimiter is the README's ObserveLimiter snippet, compiled
// here: the root module's README test checks that it is in this file line
// for line.
func observeSearchLimiter(work func(*limit.Throttler) error) error {
	th, err := limit.NewThrottler(limit.ThrottlerConfig{})
	if err != nil {
		return err
	}
	reg, err := otelretry.ObserveLimiter("search", th) // the global meter provider; WithMeterProvider for another
	if err != nil {
		return err
	}
	defer func() {
		if err := reg.Unregister(); err != nil {
			log.Print(err)
		}
	}()
	return work(th)
}

var _ = observeSearchLimiter
