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

// Defaults for zero fields of Config.
const (
	defaultPrefix       = "{dlq}:"
	defaultClaimTimeout = 5 * time.Minute
)

// batch is how many letters one round trip reads or purges.
const batch = 256

// Config configures a Queue. The zero value is the default; a bad value is
// a *retry.InvalidError naming it.
type Config struct {
	// Prefix starts every key of the queue. "" means "{dlq}:". In Redis
	// Cluster it must hold a hash tag ({…}).
	Prefix string
	// SourceKey names the Redis list of a job's source queue, for
	// ToSource and From. nil means the source's name itself.
	SourceKey func(source string) string
	// ClaimTimeout is how long a replay holds a letter: a replay that has
	// not finished by then is deemed dead, and the letter may be replayed
	// again. Make it longer than an enqueue can take. It is measured by the
	// Redis server's clock. 0 means 5m; otherwise at least a millisecond.
	ClaimTimeout time.Duration
	// Replicas is how many replicas must have each change the queue makes
	// — a letter stored, claimed, removed, moved to its source — before it
	// is acknowledged: Redis's WAIT, sent after the change on the same
	// connection. 0, the default, acknowledges a change once the primary
	// has it; a failover to a replica it had not reached yet loses it (see
	// "Replicas and failover" in the package documentation). A change that
	// fewer replicas acknowledge within a second, or by the context's
	// deadline if sooner, is an error, though the primary may keep it. It
	// needs a *goredis.Client or a *goredis.ClusterClient.
	Replicas int
}

// Queue is a dlq.Queue in Redis. It is safe for concurrent use, by any
// number of goroutines and processes sharing the server. A Queue is made by
// New; every method of a nil or zero Queue returns a *retry.InvalidError.
type Queue struct {
	c                   goredis.UniversalClient
	letters, order, seq string
	prefix              string
	source              func(string) string
	claim               time.Duration
	replicas            int
}

var _ dlq.Queue = (*Queue)(nil)

// New returns a Queue using client, or a *retry.InvalidError naming a bad
// argument. It does not contact the server.
func New(client goredis.UniversalClient, c Config) (*Queue, error) {
	switch {
	case client == nil:
		return nil, invalid("redis.New", nil, "the client must not be nil")
	case c.ClaimTimeout < 0 || c.ClaimTimeout > 0 && c.ClaimTimeout < time.Millisecond:
		return nil, invalid("redis.Config.ClaimTimeout", c.ClaimTimeout, "must be at least 1ms (0 means 5m)")
	}
	if err := checkReplicas(client, c.Replicas); err != nil {
		return nil, err
	}
	q := &Queue{c: client, prefix: c.Prefix, source: c.SourceKey, claim: c.ClaimTimeout, replicas: c.Replicas}
	if q.prefix == "" {
		q.prefix = defaultPrefix
	}
	if q.source == nil {
		q.source = func(s string) string { return s }
	}
	if q.claim == 0 {
		q.claim = defaultClaimTimeout
	}
	q.letters, q.order, q.seq = q.prefix+"letters", q.prefix+"order", q.prefix+"seq"
	return q, nil
}

func (q *Queue) claimKey(id string) string { return q.prefix + "claim:" + id }

// check refuses a Queue that New did not make, a nil context and an empty
// id, before any work.
func (q *Queue) check(method string, ctx context.Context, ids ...string) error {
	name := "redis.Queue." + method
	switch {
	case q == nil || q.c == nil:
		return invalid(name, nil, "the queue is nil, or was not made by New")
	case ctx == nil:
		return invalid(name, nil, "the context must not be nil")
	}
	for _, id := range ids {
		if id == "" {
			return invalid(name, id, "the letter id must not be empty")
		}
	}
	return nil
}

// Put stores l (see dlq.Queue).
func (q *Queue) Put(ctx context.Context, l dlq.Letter) (bool, error) {
	if err := q.check("Put", ctx); err != nil {
		return false, err
	}
	rec, err := dlq.Encode(l)
	if err != nil {
		return false, err
	}
	n, err := q.run(ctx, putScript, []string{q.letters, q.order, q.seq, q.claimKey(l.ID)}, l.ID, rec).Int()
	if err != nil {
		return false, fmt.Errorf("dlq/redis: put %s: %w", l.ID, err)
	}
	return n == 1, nil
}

// From returns the queue as a worker of a reliable queue uses it: its Put
// stores a letter and, in the same atomic step, removes its job's payload
// (one occurrence, from the tail) from list — the worker's processing list
// (LMOVE source → list) — so that dlq.Record, dlq.Do and dlq.Monitor, which
// know only Put, never leave the job in both places, nor in neither. Every
// other method is the queue's own. An empty list makes every Put return a
// *retry.InvalidError.
func (q *Queue) From(list string) dlq.Queue { return fromList{q, list} }

type fromList struct {
	*Queue
	list string
}

// Put stores l as the queue's Put does, and removes its job's payload from
// the list.
func (f fromList) Put(ctx context.Context, l dlq.Letter) (bool, error) {
	if err := f.check("From.Put", ctx); err != nil {
		return false, err
	}
	if f.list == "" {
		return false, invalid("redis.Queue.From", f.list, "the list must not be empty")
	}
	rec, err := dlq.Encode(l)
	if err != nil {
		return false, err
	}
	keys := []string{f.letters, f.order, f.seq, f.claimKey(l.ID), f.list}
	res, err := f.run(ctx, putFromScript, keys, l.ID, rec, l.Job.Payload).Int64Slice()
	if err != nil || len(res) != 2 {
		return false, fmt.Errorf("dlq/redis: put %s from %s: %w (%v)", l.ID, f.list, err, res)
	}
	return res[0] == 1, nil
}

// Get returns the letter id (see dlq.Queue).
func (q *Queue) Get(ctx context.Context, id string) (dlq.Letter, error) {
	if err := q.check("Get", ctx, id); err != nil {
		return dlq.Letter{}, err
	}
	rec, err := q.record(ctx, id)
	if err != nil {
		return dlq.Letter{}, err
	}
	return decode(id, rec)
}

// record returns the stored record of letter id, or ErrNotFound.
func (q *Queue) record(ctx context.Context, id string) (string, error) {
	rec, err := q.c.HGet(ctx, q.letters, id).Result()
	if errors.Is(err, goredis.Nil) {
		return "", fmt.Errorf("dlq/redis: letter %s: %w", id, dlq.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("dlq/redis: get %s: %w", id, err)
	}
	return rec, nil
}

// List returns the letters f selects, oldest first (see dlq.Queue).
func (q *Queue) List(ctx context.Context, f dlq.Filter) ([]dlq.Letter, error) {
	if err := q.check("List", ctx); err != nil {
		return nil, err
	}
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
	if err := q.check("Count", ctx); err != nil {
		return 0, err
	}
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
	return len(f.IDs) == 0 && f.Source == "" && f.StopReason == "" && f.Class == "" && f.Group == "" &&
		f.Since.IsZero() && f.Until.IsZero()
}

// Replay hands the letter's job to to, and removes the letter if to
// succeeded (see dlq.Queue and dlq.ReplayClaimed). With q.ToSource() it
// moves the payload to the job's source list and removes the letter in one
// atomic step.
func (q *Queue) Replay(ctx context.Context, id string, to dlq.Enqueuer) error {
	if err := q.check("Replay", ctx); err != nil {
		return err
	}
	if s, ok := to.(source); ok && s.q == q && id != "" {
		return q.move(ctx, id)
	}
	return dlq.ReplayClaimed(ctx, claimer{q}, id, to)
}

// claimer is the Claimer of a Queue (see the scripts).
type claimer struct{ q *Queue }

func (c claimer) Claim(ctx context.Context, id string) (dlq.Claim, error) {
	token := rand.Text()
	res, err := c.q.run(ctx, claimScript, []string{c.q.letters, c.q.claimKey(id)}, id, token, c.q.claim.Milliseconds()).Slice()
	if err != nil || len(res) == 0 {
		return dlq.Claim{}, fmt.Errorf("dlq/redis: claim %s: %w", id, err)
	}
	if err := status(id, res[0]); err != nil {
		return dlq.Claim{}, err
	}
	rec, _ := res[1].(string)
	return dlq.Claim{ID: id, Token: token, Record: []byte(rec)}, nil
}

// Ack removes the letter if the claim is still the replay's (see
// ackScript).
func (c claimer) Ack(ctx context.Context, cl dlq.Claim) error {
	keys := []string{c.q.letters, c.q.order, c.q.claimKey(cl.ID)}
	code, err := c.q.run(ctx, ackScript, keys, cl.ID, cl.Token, cl.Record).Int()
	switch {
	case err != nil:
		return fmt.Errorf("dlq/redis: letter %s not removed; it may be replayed again after %v: %w", cl.ID, c.q.claim, err)
	case code == 0:
		return fmt.Errorf("dlq/redis: letter %s: the claim lapsed after %v and another replay took the letter: %w", cl.ID, c.q.claim, dlq.ErrClaimLapsed)
	}
	return nil // removed, or replaced by a new death, which stays
}

func (c claimer) Release(ctx context.Context, cl dlq.Claim) error {
	if err := c.q.run(ctx, releaseScript, []string{c.q.claimKey(cl.ID)}, cl.Token).Err(); err != nil {
		return fmt.Errorf("dlq/redis: release %s (it stays claimed for up to %v): %w", cl.ID, c.q.claim, err)
	}
	return nil
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

// move replays letter id to its source list atomically. The letter is read
// first (Lua has no base64 to read the payload from the record), and moved
// only if its record is unchanged since.
func (q *Queue) move(ctx context.Context, id string) error {
	for range 3 {
		rec, err := q.record(ctx, id)
		if err != nil {
			return err
		}
		l, err := decode(id, rec)
		if err != nil {
			return err
		}
		keys := []string{q.letters, q.order, q.claimKey(id), q.source(l.Job.Source)}
		code, err := q.run(ctx, moveScript, keys, id, rec, l.Job.Payload).Int64()
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
// (Config.SourceKey), with LPUSH of its payload. Given to this queue's
// Replay, it moves the letter atomically; given to another queue's, it
// pushes the job to this Redis. The Enqueuer of a nil or zero Queue returns
// a *retry.InvalidError.
func (q *Queue) ToSource() dlq.Enqueuer { return source{q} }

type source struct{ q *Queue }

func (s source) Enqueue(ctx context.Context, job dlq.Job) error {
	if err := s.q.check("ToSource.Enqueue", ctx); err != nil {
		return err
	}
	return s.q.c.LPush(ctx, s.q.source(job.Source), job.Payload).Err()
}

// Discard removes the letter id unless a replay holds it.
func (q *Queue) Discard(ctx context.Context, id string) error {
	if err := q.check("Discard", ctx, id); err != nil {
		return err
	}
	code, err := q.run(ctx, discardScript, []string{q.letters, q.order, q.claimKey(id)}, id).Int64()
	if err != nil {
		return fmt.Errorf("dlq/redis: discard %s: %w", id, err)
	}
	return status(id, code)
}

// Purge removes the letters f selects that no replay holds.
func (q *Queue) Purge(ctx context.Context, f dlq.Filter) (int, error) {
	if err := q.check("Purge", ctx); err != nil {
		return 0, err
	}
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
		m, err := q.run(ctx, purgeScript, keys, ids...).Int()
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

// invalid returns the *retry.InvalidError for a bad argument or option:
// "name(value): reason".
func invalid(name string, value any, reason string) error {
	return &retry.InvalidError{Name: name, Value: value, Err: errors.New(reason)}
}
