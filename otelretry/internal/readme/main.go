package main

import (
	"context"
	"log"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/otelretry"
)

func main() {
	obs, err := otelretry.New("payments", otelretry.Config{}) // the global MeterProvider: your Prometheus or OTLP exporter's
	if err != nil {
		log.Fatal(err)
	}
	r, err := retry.New(retry.WithObserver(obs)) // calls, attempts, waits, and r's budget, limiter, breakers, cooldowns
	if err != nil {
		log.Fatal(err)
	}
	if err := r.Do(context.Background(), func(context.Context) error { return nil }); err != nil {
		log.Fatal(err) // every metric and the question it answers: otelretry/README.md
	}
}
