// Package redis is a dead letter queue (dlq.Queue) in Redis, for a fleet of
// workers sharing one: through github.com/redis/go-redis/v9, with every
// move between the queue and a Redis list done by one Lua script, so that a
// job is never in both places, nor in neither.
//
//	client := goredis.NewClient(&goredis.Options{Addr: "localhost:6379"})
//	q, err := redis.New(client, redis.Config{})
//	…
//	err = dlq.Do(ctx, retrier, q, job, process)                  // dead-letter
//	rep, err := dlq.Replay(ctx, q, dlq.Filter{Group: g}, q.ToSource()) // back to the job's list, atomically
//
// # Keys
//
// With the default prefix "{dlq}:" (the braces make every key of the queue
// one Redis Cluster hash slot, as its scripts need):
//
//	{dlq}:letters      hash    letter id → the letter, dlq encoding (JSON), version 2 or 1
//	{dlq}:order        zset    letter id, scored by the order of first put
//	{dlq}:seq          string  the counter of that order
//	{dlq}:claim:<id>   string  "<token> <lapse time>" of the replay holding a letter (see Replays)
//
// A job's source queue is the Redis list named by Config.SourceKey (by
// default the source's name itself, e.g. "llm-jobs"). A replay with
// ToSource pushes the payload on its head (LPUSH, for workers that pop with
// RPOP or BRPOP), exactly as it was delivered; the attempt count lives in
// the letter only, so the job starts again from its first attempt.
//
// # Scripts
//
//   - put: store the letter unless its id is there and not claimed; a put
//     over a claimed letter replaces it and voids the claim (a new death
//     during a replay).
//   - put from a list: the same, after LREM of the job's payload from the
//     worker's processing list (From).
//   - claim: SET of the claim key, if the letter exists and no claim holds
//     it (none, or a lapsed one).
//   - acknowledge / release: remove the letter (and its claim), or only the
//     claim, if the claim is still the caller's, lapsed or not.
//   - move: if no claim holds the letter and it is unchanged, LPUSH its
//     payload to the source list and remove it.
//   - discard and purge: remove letters no claim holds.
//
// In Redis Cluster, a source list used with ToSource or From must share
// the queue's hash tag (e.g. "{dlq}:llm-jobs"). The tests run the queue's
// contract on a real cluster (three primaries, a replica each), check that
// every script's keys are in one slot, and move the queue's slot while
// workers put and replay letters: no acknowledged letter is lost and none
// is replayed twice. While the slot's keys are split between the two nodes,
// a script is refused with TRYAGAIN, and go-redis gives up after its
// MaxRedirects (3): in the test, 2–5% of the calls made while the slot
// moved failed, having changed nothing; with Config.Replicas the queue retries TRYAGAIN itself
// (10ms to 100ms apart, up to 16 times), and none failed.
//
// # Replays
//
// A replay claims its letter through dlq.ReplayClaimed. The claim key holds
// the replay's token and the time its claim lapses, ClaimTimeout after it
// was taken by the Redis server's clock (TIME, so that the clocks of a fleet
// do not matter). A lapsed claim is not deleted: it stays on the letter
// until another replay takes it or the letter leaves the queue. So a replay
// whose enqueue outlasted its claim still removes the letter if nobody took
// it meanwhile, and otherwise reports dlq.ErrClaimLapsed and leaves it to the
// replay that did; and a job that dies again after the lapse is a new death
// that replaces the letter, not a duplicate.
//
// # Defaults
//
//	| setting        | default                           | change with          |
//	|----------------|-----------------------------------|----------------------|
//	| key prefix     | "{dlq}:"                          | Config.Prefix        |
//	| source list    | the source's name                 | Config.SourceKey     |
//	| replay claim   | lapses after 5m (a replayer died) | Config.ClaimTimeout  |
//	| bound          | none but Redis's memory           | —                    |
//	| replicas       | 0: a change waits for none        | Config.Replicas      |
//
// # Durability
//
// A letter is as durable as the Redis that holds it. Redis's defaults — RDB
// snapshots every few minutes, no append-only file — lose in a crash every
// write since the last snapshot: letters Put returned as stored vanish, and
// replayed ones come back. Run Redis with the append-only file, fsynced on
// every write:
//
//	appendonly yes
//	appendfsync always
//
// With these, what Redis acknowledged survives a crash of redis-server: the
// tests SIGKILL it after 20 letters were stored and 10 of them replayed, and
// restart it on the same data directory — the 10 letters are there, the 10
// replayed ones are not, and their jobs are on the source list. Without
// persistence the same crash loses all of it. appendfsync everysec may lose
// the last second or two of writes to an operating system crash or a power
// loss (that rests on Redis's documented behaviour; the tests kill only the
// process).
//
// # Replicas and failover
//
// Redis feeds its replicas asynchronously: it acknowledges a change before
// any replica has it. A primary that dies takes with it what its replica had
// not received yet, and the replica that takes over never had it. The tests
// measure it on a real Redis Cluster: eight workers put letters and replay
// every other one to its source list, the queue's replica falls 200ms behind
// (cut off from its primary), the primary is killed (SIGKILL) and the
// replica takes over. In nine runs, 430 to 767 of the 489 to 821 letters
// acknowledged as stored (and not replayed) were lost — those acknowledged
// while the replica lagged; about 55 put before were kept — and in two more
// runs, on a busier machine, every one was. Of the replays acknowledged
// meanwhile, 3 to 5 were undone (the letter back in the queue, to be
// replayed again: its job runs twice), and the others vanished, letter and
// job alike. With a replica up to date — on loopback, with no lag — the
// same kill lost nothing in three runs: a failover loses what the replica
// lags behind by.
//
// Config.Replicas closes that window: a change is acknowledged only once
// that many replicas have it (WAIT, sent after the script on the same
// connection, to the primary of the queue's slot). In the same test with
// Replicas: 1, none of 54 acknowledged letters and 49 acknowledged replays
// was lost or undone; the changes the lagging replica could not confirm
// failed instead. What it costs: each change also waits for its replica's
// acknowledgement, a round trip between the primary and the replica —
// across zones, their network's. On loopback, on a loaded two-core machine,
// a Put took a median 1.7 times as long (bench/durability, six paired runs:
// 1.05–6.1 times). While fewer replicas than Replicas are connected —
// after a failover, until the old primary comes back as a replica — every
// change fails after a second. ToSource's Enqueue to another queue's Redis
// (a plain LPUSH) does not wait.
package redis
