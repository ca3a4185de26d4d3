package postgres

import (
	"time"
)

// Defaults of Config, and what Tx keeps.
const (
	defaultTable     = "retry_idempotency"
	defaultRetention = 24 * time.Hour
	maxResult        = 1 << 20 // 1 MiB, idempotency.WithMaxResultSize's default
	maxPoll          = 500 * time.Millisecond
	defaultMaxWait   = 30 * time.Second // idempotency.WithLease's default
)

// Config configures New. Its zero value is the default store: the table
// retry_idempotency, results of Tx kept for 24h, Tx waiting at most 30s for
// a key in progress.
type Config struct {
	// Table is the store's table: a lower-case SQL name, optionally
	// qualified by its schema ("billing.idempotency"), of at most 40
	// characters a part. The store quotes it in every statement, so a name
	// that is also an SQL keyword ("user") is fine; the schema must exist.
	// "" means retry_idempotency.
	Table string
	// Retention is how long Tx keeps a key's result after its transaction
	// committed (idempotency.Do passes its own to Complete): 0 means 24h,
	// and any other value is at least 1ms.
	Retention time.Duration
	// MaxWait bounds how long Tx waits for a key that another call holds in
	// progress (a claim of idempotency.Do; Tx polls it, 10ms doubling to
	// 500ms) before it returns the retryable idempotency.ErrInProgress, as
	// idempotency.WithMaxWait bounds Do; the context bounds it too. 0 means
	// 30s, idempotency's default lease: how long the claim of a holder that
	// died can stand. Any other value is at least 1ms.
	MaxWait time.Duration
}

// withDefaults returns c with its zero fields set to the defaults, or the
// *retry.InvalidError for its first bad field.
func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Table != "" && !identifier.MatchString(c.Table):
		return c, invalid("postgres.Config.Table", c.Table, "must be a lower-case SQL name ([a-z_][a-z0-9_]*, optionally schema.name)")
	case c.Retention < 0 || c.Retention > 0 && c.Retention < time.Millisecond:
		return c, invalid("postgres.Config.Retention", c.Retention, "must be at least 1ms (0 means 24h)")
	case c.MaxWait < 0 || c.MaxWait > 0 && c.MaxWait < time.Millisecond:
		return c, invalid("postgres.Config.MaxWait", c.MaxWait, "must be at least 1ms (0 means 30s)")
	}
	if c.Table == "" {
		c.Table = defaultTable
	}
	if c.Retention == 0 {
		c.Retention = defaultRetention
	}
	if c.MaxWait == 0 {
		c.MaxWait = defaultMaxWait
	}
	return c, nil
}
