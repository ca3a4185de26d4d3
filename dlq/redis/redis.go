package redis

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/dlq"
)

// Defaults for zero fields of Options.
const (
	DefaultPrefix       = "{dlq}:"
	DefaultClaimTimeout = 5 * time.Minute
)

// batch is how many letters one round trip reads or purges.
const batch = 256

// Options configures a Queue. The zero value is the default.
type Options struct {
	// Prefix starts every key of the queue. "" means "{dlq}:". In Redis
	// Cluster it must hold a hash tag ({…}).
	Prefix string
	// SourceKey names the Redis list of a job's source queue, for
	// ToSource and PutFrom. nil means the source's name itself.
	SourceKey func(source string) string
	// ClaimTimeout is how long a replay holds a letter: a replay that has
	// not finished by then is deemed dead, and the letter may be replayed
	// again. Make it longer than an enqueue can take. 0 means 5m; otherwise
	// at least a millisecond.
	ClaimTimeout time.Duration
}

// Queue is a dlq.Queue in Redis. It is safe for concurrent use, by any
// number of goroutines and processes sharing the server.
type Queue struct {
	c                   goredis.UniversalClient
	letters, order, seq string
	prefix              string
	source              func(string) string
	claim               time.Duration
}

var _ dlq.Queue = (*Queue)(nil)

// New returns a Queue using client, or a *retry.InvalidError naming a bad
// argument. It does not contact the server.
func New(client goredis.UniversalClient, o Options) (*Queue, error) {
	switch {
	case client == nil:
		return nil, invalid("redis.New", nil, "the client must not be nil")
	case o.ClaimTimeout < 0 || o.ClaimTimeout > 0 && o.ClaimTimeout < time.Millisecond:
		return nil, invalid("Options.ClaimTimeout", o.ClaimTimeout, "must be at least 1ms (0 means 5m)")
	}
	q := &Queue{c: client, prefix: o.Prefix, source: o.SourceKey, claim: o.ClaimTimeout}
	if q.prefix == "" {
		q.prefix = DefaultPrefix
	}
	if q.source == nil {
		q.source = func(s string) string { return s }
	}
	if q.claim == 0 {
		q.claim = DefaultClaimTimeout
	}
	q.letters, q.order, q.seq = q.prefix+"letters", q.prefix+"order", q.prefix+"seq"
	return q, nil
}

func (q *Queue) claimKey(id string) string { return q.prefix + "claim:" + id }

// Put stores l (see dlq.Queue).
func (q *Queue) Put(ctx context.Context, l dlq.Letter) (bool, error) {
	rec, err := dlq.Encode(l)
	if err != nil {
		return false, err
	}
	n, err := putScript.Run(ctx, q.c, []string{q.letters, q.order, q.seq, q.claimKey(l.ID)}, l.ID, rec).Int()
	if err != nil {
		return false, fmt.Errorf("dlq/redis: put %s: %w", l.ID, err)
	}
	return n == 1, nil
}

// From returns the queue as a worker of a reliable queue uses it: its Put is
// PutFrom(ctx, l, list), so that dlq.Record, dlq.Do and dlq.Monitor — which
// know only Put — store a letter and remove the job's message from the
// processing list in one atomic step: the job is never in both places, nor in
// neither. Every other method is the queue's own.
func (q *Queue) From(list string) dlq.Queue { return fromList{q, list} }

type fromList struct {
	*Queue
	list string
}

func (f fromList) Put(ctx context.Context, l dlq.Letter) (bool, error) {
	stored, _, err := f.PutFrom(ctx, l, f.list)
	return stored, err
}

// PutFrom stores l as Put does and, in the same atomic step, removes its
// job's payload (one occurrence, from the tail) from list: the worker's
// processing list of a reliable queue (LMOVE source → list). It reports
// whether the letter was stored and whether the payload was found in list.
func (q *Queue) PutFrom(ctx context.Context, l dlq.Letter, list string) (stored, removed bool, err error) {
	rec, err := dlq.Encode(l)
	if err != nil {
		return false, false, err
	}
	keys := []string{q.letters, q.order, q.seq, q.claimKey(l.ID), list}
	res, err := putFromScript.Run(ctx, q.c, keys, l.ID, rec, l.Job.Payload).Int64Slice()
	if err != nil || len(res) != 2 {
		return false, false, fmt.Errorf("dlq/redis: put %s from %s: %w (%v)", l.ID, list, err, res)
	}
	return res[0] == 1, res[1] > 0, nil
}

// Get returns the letter id (see dlq.Queue).
func (q *Queue) Get(ctx context.Context, id string) (dlq.Letter, error) {
	rec, err := q.c.HGet(ctx, q.letters, id).Result()
	if errors.Is(err, goredis.Nil) {
		return dlq.Letter{}, fmt.Errorf("dlq/redis: letter %s: %w", id, dlq.ErrNotFound)
	}
	if err != nil {
		return dlq.Letter{}, fmt.Errorf("dlq/redis: get %s: %w", id, err)
	}
	return decode(id, rec)
}

// List returns the letters f selects, oldest first (see dlq.Queue).
func (q *Queue) List(ctx context.Context, f dlq.Filter) ([]dlq.Letter, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	ids, err := q.c.ZRange(ctx, q.order, 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("dlq/redis: list: %w", err)
	}
	if len(f.IDs) > 0 {
		ids = keep(ids, f.IDs)
	}
	var out []dlq.Letter
	for start := 0; start < len(ids) && (f.Limit == 0 || len(out) < f.Limit); start += batch {
		ls, err := q.read(ctx, ids[start:min(start+batch, len(ids))])
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			if f.Match(l) && (f.Limit == 0 || len(out) < f.Limit) {
				out = append(out, l)
			}
		}
	}
	return out, nil
}

func keep(ids, wanted []string) []string {
	set := make(map[string]bool, len(wanted))
	for _, id := range wanted {
		set[id] = true
	}
	var out []string
	for _, id := range ids {
		if set[id] {
			out = append(out, id)
		}
	}
	return out
}

// read decodes the letters ids, skipping those removed since the listing.
func (q *Queue) read(ctx context.Context, ids []string) ([]dlq.Letter, error) {
	recs, err := q.c.HMGet(ctx, q.letters, ids...).Result()
	if err != nil {
		return nil, fmt.Errorf("dlq/redis: list: %w", err)
	}
	out := make([]dlq.Letter, 0, len(recs))
	for i, r := range recs {
		rec, ok := r.(string)
		if !ok {
			continue
		}
		l, err := decode(ids[i], rec)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// Count counts the letters f selects: one ZCARD for the zero filter.
func (q *Queue) Count(ctx context.Context, f dlq.Filter) (int, error) {
	if err := f.Validate(); err != nil {
		return 0, err
	}
	if isZero(f) {
		n, err := q.c.ZCard(ctx, q.order).Result()
		if err != nil {
			return 0, fmt.Errorf("dlq/redis: count: %w", err)
		}
		return int(n), nil
	}
	f.Limit = 0
	ls, err := q.List(ctx, f)
	return len(ls), err
}

func isZero(f dlq.Filter) bool {
	f.Limit = 0
	return len(f.IDs) == 0 && f.Source == "" && f.Reason == "" && f.Class == "" && f.Group == "" &&
		f.Since.IsZero() && f.Until.IsZero()
}

// Replay hands the letter's job to to, and removes the letter if to
// succeeded (see dlq.Queue). With q.ToSource() it moves the payload to the
// job's source list and removes the letter in one atomic step.
func (q *Queue) Replay(ctx context.Context, id string, to dlq.Enqueuer) (err error) {
	if to == nil {
		return invalid("Replay", nil, "the Enqueuer must not be nil")
	}
	if s, ok := to.(source); ok && s.q == q {
		return q.move(ctx, id)
	}
	token, rec, err := q.claimLetter(ctx, id)
	if err != nil {
		return err
	}
	// Whatever happens to ctx now, the claim is settled: a letter left
	// claimed would wait for the claim timeout. A panic in to releases it.
	settle := context.WithoutCancel(ctx)
	enqueued := false
	defer func() {
		if !enqueued {
			err = errors.Join(err, q.release(settle, id, token))
		}
	}()
	l, err := decode(id, rec)
	if err != nil {
		return err
	}
	if err := to.Enqueue(ctx, l.Job); err != nil {
		return fmt.Errorf("dlq/redis: replay %s: %w", id, err)
	}
	enqueued = true
	// The claim may be gone: a Put of a new death replaced the letter, which
	// stays; or the claim lapsed, and another replay may enqueue it again.
	keys := []string{q.letters, q.order, q.claimKey(id)}
	if err := ackScript.Run(settle, q.c, keys, id, token).Err(); err != nil {
		return fmt.Errorf("dlq/redis: letter %s was enqueued but not removed; it may be replayed again after %v: %w", id, q.claim, err)
	}
	return nil
}

func (q *Queue) claimLetter(ctx context.Context, id string) (token, rec string, err error) {
	token = rand.Text()
	res, err := claimScript.Run(ctx, q.c, []string{q.letters, q.claimKey(id)}, id, token, q.claim.Milliseconds()).Slice()
	if err != nil || len(res) == 0 {
		return "", "", fmt.Errorf("dlq/redis: claim %s: %w", id, err)
	}
	if err := status(id, res[0]); err != nil {
		return "", "", err
	}
	rec, _ = res[1].(string)
	return token, rec, nil
}

// status turns a script's code into ErrNotFound or ErrClaimed.
func status(id string, code any) error {
	switch code {
	case int64(0):
		return fmt.Errorf("dlq/redis: letter %s: %w", id, dlq.ErrNotFound)
	case int64(-1):
		return fmt.Errorf("dlq/redis: letter %s: %w", id, dlq.ErrClaimed)
	}
	return nil
}

func (q *Queue) release(ctx context.Context, id, token string) error {
	if err := releaseScript.Run(ctx, q.c, []string{q.claimKey(id)}, token).Err(); err != nil {
		return fmt.Errorf("dlq/redis: release %s (it stays claimed for up to %v): %w", id, q.claim, err)
	}
	return nil
}

// move replays letter id to its source list atomically. The letter is read
// first (Lua has no base64 to read the payload from the record), and moved
// only if unchanged since.
func (q *Queue) move(ctx context.Context, id string) error {
	for range 3 {
		l, err := q.Get(ctx, id)
		if err != nil {
			return err
		}
		rec, _ := dlq.Encode(l)
		keys := []string{q.letters, q.order, q.claimKey(id), q.source(l.Job.Source)}
		code, err := moveScript.Run(ctx, q.c, keys, id, rec, l.Job.Payload).Int64()
		if err != nil {
			return fmt.Errorf("dlq/redis: replay %s to %s: %w", id, keys[3], err)
		}
		if code != -2 {
			return status(id, code)
		}
	}
	return fmt.Errorf("dlq/redis: letter %s: %w (it kept changing)", id, dlq.ErrClaimed)
}

// ToSource returns the Enqueuer that puts a job back on its source list
// (Options.SourceKey), with LPUSH of its payload. Given to this queue's
// Replay, it moves the letter atomically; given to another queue's, it
// pushes the job to this Redis.
func (q *Queue) ToSource() dlq.Enqueuer { return source{q} }

type source struct{ q *Queue }

func (s source) Enqueue(ctx context.Context, job dlq.Job) error {
	return s.q.c.LPush(ctx, s.q.source(job.Source), job.Payload).Err()
}

// Discard removes the letter id unless a replay holds it.
func (q *Queue) Discard(ctx context.Context, id string) error {
	code, err := discardScript.Run(ctx, q.c, []string{q.letters, q.order, q.claimKey(id)}, id).Int64()
	if err != nil {
		return fmt.Errorf("dlq/redis: discard %s: %w", id, err)
	}
	return status(id, code)
}

// Purge removes the letters f selects that no replay holds.
func (q *Queue) Purge(ctx context.Context, f dlq.Filter) (int, error) {
	if err := f.Validate(); err != nil {
		return 0, err
	}
	f.Limit = 0
	ls, err := q.List(ctx, f)
	if err != nil {
		return 0, err
	}
	n := 0
	for start := 0; start < len(ls); start += batch {
		keys, ids := []string{q.letters, q.order}, []any{}
		for _, l := range ls[start:min(start+batch, len(ls))] {
			keys, ids = append(keys, q.claimKey(l.ID)), append(ids, l.ID)
		}
		m, err := purgeScript.Run(ctx, q.c, keys, ids...).Int()
		n += m
		if err != nil {
			return n, fmt.Errorf("dlq/redis: purge: %w", err)
		}
	}
	return n, nil
}

func decode(id, rec string) (dlq.Letter, error) {
	l, err := dlq.Decode([]byte(rec))
	if err != nil {
		return dlq.Letter{}, fmt.Errorf("dlq/redis: letter %s: %w", id, err)
	}
	return l, nil
}

func invalid(name string, value any, reason string) error {
	return &retry.InvalidError{Name: name, Value: value, Err: errors.New(reason)}
}
