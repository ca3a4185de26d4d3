package otelretry_test

import (
	"log"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/otelretry"
)

// observeSearchLimiter is the README's snippet of a watched limiter,
// compiled here.
func observeSearchLimiter(work func(*retry.Retrier) error) error {
	th, err := limit.NewThrottler(limit.ThrottlerConfig{})
	if err != nil {
		return err
	}
	obs, err := otelretry.New("search", otelretry.Config{}) // the global meter provider; Config.MeterProvider for another
	if err != nil {
		return err
	}
	defer func() {
		if err := obs.Unregister(); err != nil {
			log.Print(err)
		}
	}()
	if err := obs.Watch(th); err != nil { // its rejection probability, read at collection
		return err
	}
	r, err := retry.New(retry.WithLimiter(th), retry.WithObserver(obs))
	if err != nil {
		return err
	}
	return work(r)
}

var _ = observeSearchLimiter
