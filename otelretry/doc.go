// Package otelretry reports what the retry library does — calls, attempts,
// waits, budgets, breakers, cooldowns, dead letters, idempotency keys and HTTP
// attempts — as OpenTelemetry metrics and trace events.
package otelretry
