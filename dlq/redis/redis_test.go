package redis_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/queuetest"
	"github.com/retrykit/retry/dlq/redis"
	"github.com/retrykit/retry/internal/redistest"
)

// server starts a redis-server for t and returns a client of it.
func server(t *testing.T) *goredis.Client {
	t.Helper()
	s := redistest.Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr})
	t.Cleanup(func() { c.Close() })
	return c
}

var prefixes atomic.Int64

// fresh returns an empty queue on c: one key prefix per queue.
func fresh(t *testing.T, c goredis.UniversalClient, cfg redis.Config) *redis.Queue {
	t.Helper()
	if cfg.Prefix == "" {
		cfg.Prefix = fmt.Sprintf("{t%d}:", prefixes.Add(1))
	}
	q, err := redis.New(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestConformance(t *testing.T) {
	c := server(t)
	queuetest.Run(t, func(t *testing.T) dlq.Queue { return fresh(t, c, redis.Config{}) })
}

// TestLapsedClaims runs the lapse suite against a real redis-server: two
// handles on one key prefix, one whose claims lapse after a millisecond.
func TestLapsedClaims(t *testing.T) {
	c := server(t)
	queuetest.RunLapses(t, func(t *testing.T) queuetest.Handles {
		prefix := fmt.Sprintf("{t%d}:", prefixes.Add(1))
		return func(claim time.Duration) dlq.Queue {
			return fresh(t, c, redis.Config{Prefix: prefix, ClaimTimeout: claim})
		}
	})
}

// v1 is a letter as encoding version 1 wrote it.
const v1 = `{"v":1,"id":"baabc1e43114f0a6","job":{"id":"7","source":"llm-jobs","payload":"aGk="},"reason":"failed","attempts":1,"waited_ns":0,"elapsed_ns":0,"retry_after_ns":0,"first_failure":"2026-11-29T10:00:00Z","last_failure":"2026-11-29T10:00:00Z","last":{"attempt":1,"type":"*errors.errorString","error":"boom","verdict":"retry","class":"unclassified","retry_after_ns":0,"limit":0,"timeout":false,"delay_ns":0},"failures":[{"attempt":1,"type":"*errors.errorString","error":"boom","verdict":"retry","class":"unclassified","retry_after_ns":0,"limit":0,"timeout":false,"delay_ns":0}]}`

func TestAVersion1LetterIsReadAndMovedToItsSource(t *testing.T) {
	c := server(t)
	ctx := context.Background()
	q := fresh(t, c, redis.Config{Prefix: "{v1}:"})
	c.HSet(ctx, "{v1}:letters", "baabc1e43114f0a6", v1)
	c.ZAdd(ctx, "{v1}:order", goredis.Z{Score: 1, Member: "baabc1e43114f0a6"})
	ls, err := q.List(ctx, dlq.Filter{StopReason: "failed"})
	if err != nil || len(ls) != 1 || ls[0].Job.ID != "7" {
		t.Fatalf("List of a version 1 letter = %+v, %v", ls, err)
	}
	rep, err := dlq.Replay(ctx, q, dlq.Filter{}, q.ToSource())
	if err != nil || len(rep.Replayed) != 1 {
		t.Fatalf("Replay to its source = %+v, %v; want the version 1 letter moved as it is stored", rep, err)
	}
	if got, _ := c.LRange(ctx, "llm-jobs", 0, -1).Result(); fmt.Sprint(got) != "[hi]" {
		t.Fatalf("the source list holds %q", got)
	}
}

func TestAClaimWithoutALapseTimeHoldsUntilItExpires(t *testing.T) {
	c := server(t)
	ctx := context.Background()
	q := fresh(t, c, redis.Config{Prefix: "{old}:"})
	l := letter(t, "a")
	q.Put(ctx, l)
	c.Set(ctx, "{old}:claim:"+l.ID, "token-of-an-older-version", time.Minute) // its replayer still runs
	if err := q.Discard(ctx, l.ID); !errors.Is(err, dlq.ErrClaimed) {
		t.Fatalf("Discard = %v; want ErrClaimed", err)
	}
	if err := q.Replay(ctx, l.ID, q.ToSource()); !errors.Is(err, dlq.ErrClaimed) {
		t.Fatalf("Replay = %v; want ErrClaimed", err)
	}
}

func letter(t *testing.T, id string) dlq.Letter {
	t.Helper()
	l, ok := dlq.NewLetter(dlq.Job{ID: id, Source: "llm-jobs", Payload: []byte(`{"job":"` + id + `"}`)},
		errors.New("model overloaded"), time.Now())
	if !ok {
		t.Fatal("no letter")
	}
	return l
}

func TestReplayToSourceMovesAtomically(t *testing.T) {
	c := server(t)
	ctx := context.Background()
	q := fresh(t, c, redis.Config{SourceKey: func(s string) string { return "queue:" + s }})
	a, b := letter(t, "a"), letter(t, "b")
	for _, l := range []dlq.Letter{a, b} {
		if _, err := q.Put(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := dlq.Replay(ctx, q, dlq.Filter{}, q.ToSource())
	if err != nil || len(rep.Replayed) != 2 {
		t.Fatalf("Replay = %+v, %v", rep, err)
	}
	got, _ := c.LRange(ctx, "queue:llm-jobs", 0, -1).Result()
	if fmt.Sprint(got) != `[{"job":"b"} {"job":"a"}]` {
		t.Fatalf("source list = %v; want both payloads, pushed on the head in order", got)
	}
	if n, _ := q.Count(ctx, dlq.Filter{}); n != 0 {
		t.Fatalf("%d letters left", n)
	}
}

func TestReplayToSourceLeavesAClaimedLetter(t *testing.T) {
	c := server(t)
	ctx := context.Background()
	q := fresh(t, c, redis.Config{})
	l := letter(t, "a")
	q.Put(ctx, l)
	var inner error
	q.Replay(ctx, l.ID, dlq.EnqueueFunc(func(ctx context.Context, _ dlq.Job) error {
		inner = q.Replay(ctx, l.ID, q.ToSource())
		return errors.New("broker down")
	}))
	if !errors.Is(inner, dlq.ErrClaimed) {
		t.Fatalf("a move during another replay = %v; want ErrClaimed", inner)
	}
	if n, _ := c.LLen(ctx, "llm-jobs").Result(); n != 0 {
		t.Fatalf("the source list has %d jobs; want none", n)
	}
	if _, err := q.Get(ctx, l.ID); err != nil {
		t.Fatalf("the letter is gone: %v", err)
	}
}

func TestFromPutMovesAJobOutOfTheProcessingList(t *testing.T) {
	c := server(t)
	ctx := context.Background()
	q := fresh(t, c, redis.Config{})
	l := letter(t, "a")
	c.LPush(ctx, "llm-jobs", l.Job.Payload, "another job")
	c.LMove(ctx, "llm-jobs", "llm-jobs:processing", "RIGHT", "LEFT") // a worker took it
	c.LMove(ctx, "llm-jobs", "llm-jobs:processing", "RIGHT", "LEFT") // and the other one
	stored, err := q.From("llm-jobs:processing").Put(ctx, l)
	if !stored || err != nil {
		t.Fatalf("Put = %v, %v; want stored", stored, err)
	}
	if left, _ := c.LRange(ctx, "llm-jobs:processing", 0, -1).Result(); len(left) != 1 || left[0] != "another job" {
		t.Fatalf("processing %q; want only the other job", left)
	}
	stored, err = q.From("llm-jobs:processing").Put(ctx, l)
	if left, _ := c.LLen(ctx, "llm-jobs:processing").Result(); stored || err != nil || left != 1 {
		t.Fatalf("a second Put = %v, %v with %d jobs processing; want a duplicate, nothing removed", stored, err, left)
	}
}

func TestFromMakesRecordMoveTheJobOutOfProcessing(t *testing.T) {
	c := server(t)
	ctx := context.Background()
	q := fresh(t, c, redis.Config{})
	job := dlq.Job{ID: "7", Source: "llm-jobs", Payload: []byte(`{"doc":7}`)}
	c.LPush(ctx, "llm-jobs", job.Payload)
	c.LMove(ctx, "llm-jobs", "llm-jobs:processing", "RIGHT", "LEFT") // a worker took it
	err := dlq.Record(ctx, q.From("llm-jobs:processing"), job, errors.New("gave up"))
	if !errors.Is(err, dlq.ErrDeadLettered) {
		t.Fatalf("Record = %v; want it dead-lettered", err)
	}
	if n, _ := c.LLen(ctx, "llm-jobs:processing").Result(); n != 0 {
		t.Fatalf("%d jobs still processing; want the letter's job moved out", n)
	}
	if _, err := q.Get(ctx, dlq.LetterID(job.Source, job.ID)); err != nil {
		t.Fatalf("the letter is not stored: %v", err)
	}
}

func TestTwoProcessesShareOneQueueAndReplayOnce(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	var queues []*redis.Queue
	for range 2 { // two workers, each with its own client
		c := goredis.NewClient(&goredis.Options{Addr: s.Addr})
		t.Cleanup(func() { c.Close() })
		q, _ := redis.New(c, redis.Config{})
		queues = append(queues, q)
	}
	var ls []dlq.Letter
	for i := range 20 {
		l := letter(t, fmt.Sprint(i))
		ls = append(ls, l)
		queues[i%2].Put(ctx, l)
		queues[(i+1)%2].Put(ctx, l) // redelivered to the other worker
	}
	if n, _ := queues[0].Count(ctx, dlq.Filter{}); n != 20 {
		t.Fatalf("%d letters, want 20", n)
	}
	var enqueued sync.Map
	var dupes atomic.Int64
	to := dlq.EnqueueFunc(func(_ context.Context, j dlq.Job) error {
		if _, loaded := enqueued.LoadOrStore(j.ID, true); loaded {
			dupes.Add(1)
		}
		return nil
	})
	var wg sync.WaitGroup
	for _, q := range queues {
		wg.Go(func() { dlq.Replay(ctx, q, dlq.Filter{}, to) })
	}
	wg.Wait()
	n := 0
	enqueued.Range(func(any, any) bool { n++; return true })
	if n != 20 || dupes.Load() != 0 {
		t.Fatalf("%d jobs enqueued, %d twice; want 20, none twice", n, dupes.Load())
	}
}

func TestKeysAreWhereTheDocumentationSays(t *testing.T) {
	c := server(t)
	ctx := context.Background()
	q := fresh(t, c, redis.Config{Prefix: "{dlq}:"})
	l := letter(t, "a")
	q.Put(ctx, l)
	rec, err := c.HGet(ctx, "{dlq}:letters", l.ID).Result()
	if err != nil {
		t.Fatal(err)
	}
	if back, err := dlq.Decode([]byte(rec)); err != nil || back.ID != l.ID {
		t.Fatalf("the hash holds %q (%v)", rec, err)
	}
	if score, err := c.ZScore(ctx, "{dlq}:order", l.ID).Result(); err != nil || score != 1 {
		t.Fatalf("order score = %v, %v; want 1", score, err)
	}
}

func TestACorruptRecordIsReportedNotPanicked(t *testing.T) {
	c := server(t)
	ctx := context.Background()
	q := fresh(t, c, redis.Config{Prefix: "{x}:"})
	l := letter(t, "a")
	q.Put(ctx, l)
	c.HSet(ctx, "{x}:letters", l.ID, `{"v":7}`)
	if _, err := q.Get(ctx, l.ID); !errors.Is(err, dlq.ErrVersion) {
		t.Fatalf("Get = %v; want ErrVersion", err)
	}
	if err := q.Discard(ctx, l.ID); err != nil {
		t.Fatalf("Discard = %v; an operator must be able to remove it", err)
	}
}

func TestNewValidatesItsArguments(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	tests := []struct {
		name   string
		client goredis.UniversalClient
		c      redis.Config
		field  string
	}{
		{"a nil client", nil, redis.Config{}, "redis.New"},
		{"a negative claim timeout", c, redis.Config{ClaimTimeout: -time.Second}, "redis.Config.ClaimTimeout"},
		{"a claim timeout under a millisecond", c, redis.Config{ClaimTimeout: time.Microsecond}, "redis.Config.ClaimTimeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused, naming "+tt.field, func(t *testing.T) {
			_, err := redis.New(tt.client, tt.c)
			var inv *retry.InvalidError
			if !errors.As(err, &inv) || inv.Name != tt.field {
				t.Fatalf("New = %v; want an *InvalidError naming %s", err, tt.field)
			}
		})
	}
}
