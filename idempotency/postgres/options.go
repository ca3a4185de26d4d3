package postgres

import (
	"time"

	"github.com/retrykit/retry/idempotency"
)

// config is what the options set.
type config struct {
	table     string
	retention time.Duration
	maxResult int
}

func defaults() config {
	return config{table: DefaultTable, retention: idempotency.DefaultRetention, maxResult: idempotency.DefaultMaxResultSize}
}

// Option configures New.
type Option func(*config) error

// WithTable sets the store's table: a lower-case SQL name, optionally
// qualified by its schema ("billing.idempotency"), of at most 40 characters
// a part. The default is DefaultTable.
func WithTable(name string) Option {
	return func(c *config) error {
		if !identifier.MatchString(name) {
			return invalid("postgres.WithTable", name, "must be a lower-case SQL name ([a-z_][a-z0-9_]*, optionally schema.name)")
		}
		c.table = name
		return nil
	}
}

// WithRetention sets how long Tx keeps a key's result after its transaction
// committed (idempotency.Do passes its own to Complete). The default is idempotency.DefaultRetention.
func WithRetention(d time.Duration) Option {
	return func(c *config) error {
		if d < time.Millisecond {
			return invalid("postgres.WithRetention", d, "must be at least 1ms")
		}
		c.retention = d
		return nil
	}
}
