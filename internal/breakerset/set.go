// Package breakerset keeps one circuit breaker per (host, model) key for the
// transports that wrap calls in breakers (httpretry, grpcretry): made on
// first use, and bounded, since the keys come from the requests.
package breakerset

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
)

// MaxKeys bounds the breakers a Set keeps: the same bound as the cooldown
// registry's (breaker.DefaultMaxKeys). Past it, a new key gets no breaker.
const MaxKeys = breaker.DefaultMaxKeys

// Set keeps one breaker per key. It is safe for concurrent use.
type Set struct {
	pkg      string // "httpretry" or "grpcretry": the prefix of its errors
	settings func(breaker.HostModel) breaker.Settings
	opts     []breaker.Option
	max      int64
	n        atomic.Int64
	m        sync.Map // breaker.HostModel → *breaker.Breaker
}

// New returns a Set whose breakers have the settings settings returns for
// their key (Name defaults to the key) and opts; max 0 means MaxKeys.
func New(pkg string, settings func(breaker.HostModel) breaker.Settings, max int, opts ...breaker.Option) *Set {
	if max <= 0 {
		max = MaxKeys
	}
	return &Set{pkg: pkg, settings: settings, opts: opts, max: int64(max)}
}

// Get returns key's breaker, made with r on its first use. It returns nil
// and no error when the Set is full and key is new: the call then runs
// without a breaker, rather than failing or letting an attacker who varies
// the host grow the map without bound.
func (s *Set) Get(r *retry.Retrier, key breaker.HostModel) (*breaker.Breaker, error) {
	if b, ok := s.m.Load(key); ok {
		return b.(*breaker.Breaker), nil
	}
	if s.n.Add(1) > s.max {
		s.n.Add(-1)
		return nil, nil
	}
	st := s.settings(key)
	if st.Name == "" {
		st.Name = key.String()
	}
	b, err := breaker.New(st, r, s.opts...)
	if err != nil {
		s.n.Add(-1)
		return nil, fmt.Errorf("%s: breaker for %s: %w", s.pkg, key, err)
	}
	actual, loaded := s.m.LoadOrStore(key, b)
	if loaded {
		s.n.Add(-1) // another caller made key's breaker first
	}
	return actual.(*breaker.Breaker), nil
}

// Len returns the number of breakers kept.
func (s *Set) Len() int { return int(s.n.Load()) }
