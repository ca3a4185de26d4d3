package main

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/retrykit/retry/idempotency"
	idemredis "github.com/retrykit/retry/idempotency/redis"
)

// queueName is the jobs' queue, and their dlq.Job.Source.
const queueName = "llm-jobs"

// claimLease bounds how long a job stays claimed by a worker that died: after
// it, a redelivery of the job may claim it again.
const claimLease = time.Minute

// document is what a client submits: a text to translate, under the
// idempotency key the client chose for this submission.
type document struct {
	Key  string `json:"key"`
	Lang string `json:"lang"`
	Text string `json:"text"`
}

// message is what travels on the queue.
type message struct {
	JobID string   `json:"job_id"`
	Doc   document `json:"doc"`
}

// jobQueue is a reliable job queue on Redis lists. Producers LPUSH messages;
// a worker moves each one to a processing list (LMOVE) and removes it from
// there only once its job is done or dead-lettered, so a worker that dies
// mid-job leaves the message where a reaper finds it and delivers it again.
// Delivery is at least once; the claim by job id makes processing once.
//
// Every key starts with ns, one hash tag, so that in Redis Cluster they
// share a slot, as the dead letter queue's moves to and from the lists need.
type jobQueue struct {
	rdb        *goredis.Client
	ns         string
	list       string // the queue
	processing string // messages taken and not yet acknowledged
	idem       *idemredis.Store
	claimer    *goredis.Script
}

func newJobQueue(rdb *goredis.Client, ns string) (*jobQueue, error) {
	idem, err := idemredis.New(rdb, idemredis.Config{Prefix: ns + "idempotency:"})
	if err != nil {
		return nil, err
	}
	return &jobQueue{rdb: rdb, ns: ns, list: ns + queueName, processing: ns + queueName + ":processing",
		idem: idem, claimer: goredis.NewScript(claimScript)}, nil
}

// enqueue puts doc on the queue once per idempotency key: a client retrying
// the same submission gets the first job's id back (duplicate) instead of a
// second job. The job id is derived from the key, so that even an enqueue
// repeated after a crash between its LPUSH and its record — the one window
// idempotency.Do cannot close — carries the same id, and the worker's claim
// by job id still processes it once.
func (q *jobQueue) enqueue(ctx context.Context, doc document) (jobID string, duplicate bool, err error) {
	body, err := json.Marshal(doc)
	if err != nil {
		return "", false, err
	}
	res, err := idempotency.Do(ctx, q.idem, "enqueue:"+doc.Key, idempotency.NewFingerprint(body),
		func(ctx context.Context) ([]byte, error) { return q.push(ctx, doc) },
		idempotency.WithPollInterval(20*time.Millisecond)) // a duplicate waits for the first enqueue: milliseconds
	return string(res.Value), res.Replay, err
}

func (q *jobQueue) push(ctx context.Context, doc document) ([]byte, error) {
	key, err := idempotency.DeriveKey(queueName, doc.Key)
	if err != nil {
		return nil, err
	}
	id := "job-" + key[:8]
	msg, err := json.Marshal(message{JobID: id, Doc: doc})
	if err != nil {
		return nil, err
	}
	return []byte(id), q.rdb.LPush(ctx, q.list, msg).Err()
}

// take moves the oldest message to the processing list and returns it;
// goredis.Nil when the queue is empty.
func (q *jobQueue) take(ctx context.Context) (string, error) {
	return q.rdb.LMove(ctx, q.list, q.processing, "RIGHT", "LEFT").Result()
}

// ack removes a message from the processing list: it will not be delivered
// again.
func (q *jobQueue) ack(ctx context.Context, msg string) error {
	return q.rdb.LRem(ctx, q.processing, 1, msg).Err()
}

// requeue is the reaper: it puts every message still in the processing list
// back on the queue. Run while no worker is, it finds the messages of
// workers that died before acknowledging them.
func (q *jobQueue) requeue(ctx context.Context) (int, error) {
	for n := 0; ; n++ {
		err := q.rdb.LMove(ctx, q.processing, q.list, "RIGHT", "LEFT").Err()
		if errors.Is(err, goredis.Nil) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// claimScript marks a job as being processed, atomically, unless a delivery
// of it is being processed or is done. A dead job may be claimed again: that
// is what a replay is. The claim lapses after its lease, should its worker
// die.
const claimScript = `
local state = redis.call('GET', KEYS[1])
if state and state ~= 'dead' then return 0 end
redis.call('SET', KEYS[1], 'processing', 'PX', ARGV[1])
return 1`

// claim reports whether this delivery of the job won the right to process it.
func (q *jobQueue) claim(ctx context.Context, jobID string) (bool, error) {
	n, err := q.claimer.Run(ctx, q.rdb, []string{q.state(jobID)}, claimLease.Milliseconds()).Int()
	return n == 1, err
}

// complete stores the job's result — its side effect, counted so that a
// second run would show — and marks it done, in one transaction. The done
// mark has no expiry here; a real worker keeps it at least as long as a
// message can be delivered again.
func (q *jobQueue) complete(ctx context.Context, jobID, result string) error {
	_, err := q.rdb.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.HSet(ctx, q.ns+"results", jobID, result)
		p.HIncrBy(ctx, q.ns+"effects", jobID, 1)
		p.Set(ctx, q.state(jobID), "done", 0)
		return nil
	})
	return err
}

// markDead records that the job is in the dead letter queue: a replay may
// claim it again.
func (q *jobQueue) markDead(ctx context.Context, jobID string) error {
	return q.rdb.Set(ctx, q.state(jobID), "dead", 0).Err()
}

// release gives up a claim, for a job that was neither done nor
// dead-lettered: its message stays in the processing list, for the reaper.
func (q *jobQueue) release(ctx context.Context, jobID string) error {
	return q.rdb.Del(ctx, q.state(jobID)).Err()
}

func (q *jobQueue) state(jobID string) string { return q.ns + "job:" + jobID }

// effects returns how many times each job's side effect ran.
func (q *jobQueue) effects(ctx context.Context) (map[string]string, error) {
	return q.rdb.HGetAll(ctx, q.ns+"effects").Result()
}

// lengths returns the lengths of the queue and of the processing list.
func (q *jobQueue) lengths(ctx context.Context) (queued, processing int64, err error) {
	queued, err = q.rdb.LLen(ctx, q.list).Result()
	if err != nil {
		return 0, 0, err
	}
	processing, err = q.rdb.LLen(ctx, q.processing).Result()
	return queued, processing, err
}

// cleanup deletes every key of the run, for a Redis that outlives it.
func (q *jobQueue) cleanup(ctx context.Context) error {
	iter := q.rdb.Scan(ctx, 0, q.ns+"*", 100).Iterator()
	for iter.Next(ctx) {
		if err := q.rdb.Del(ctx, iter.Val()).Err(); err != nil {
			return err
		}
	}
	return iter.Err()
}
