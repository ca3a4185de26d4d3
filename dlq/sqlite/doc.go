// Package sqlite is a durable dead letter queue (dlq.Queue) for one machine:
// a SQLite file, through a pure-Go driver (modernc.org/sqlite, no cgo), that
// an operator can also read with the sqlite3 shell or cmd/dlq.
//
//	q, err := sqlite.Open(ctx, "/var/lib/worker/dlq.db", sqlite.Config{})
//	if err != nil {
//		return err
//	}
//	defer q.Close()
//	err = dlq.Do(ctx, retrier, q, job, process)
//
// # Durability
//
// Every write is one SQLite transaction, in write-ahead-log mode with
// synchronous=FULL. What the tests show: a writer process killed with
// SIGKILL at any point loses no letter whose Put had returned, and leaves a
// file that passes PRAGMA integrity_check
// (TestKilledWriterLosesNoAcknowledgedLetter kills a writer mid-stream,
// three times). What rests on synchronous=FULL, and is not tested here:
// that a machine which loses power or crashes keeps them too — SQLite then
// syncs the log to disk before Put returns, which holds only if the disk
// and file system honour fsync. WAL also lets readers, such as cmd/dlq,
// read while the application writes. Several processes may share the file;
// a write waits up to BusyTimeout for another's.
//
// # Replays
//
// A replay claims a letter (claim and claimed_until below) through
// dlq.ReplayClaimed. A claim lapses after ClaimTimeout, so that a replayer
// that died does not hold its letter for ever, but stays on the row until
// another replay takes it: a replay whose enqueue outlasted its claim still
// removes the letter if nobody took it meanwhile, and otherwise reports
// dlq.ErrClaimLapsed and leaves it.
//
// # Schema (version 3)
//
//	CREATE TABLE dlq_letters (
//		seq           INTEGER PRIMARY KEY AUTOINCREMENT, -- order of first put
//		id            TEXT NOT NULL UNIQUE,  -- dlq.LetterID(source, job_id)
//		source        TEXT NOT NULL,         -- the job's source queue
//		job_id        TEXT NOT NULL,
//		stop_reason   TEXT NOT NULL,         -- why the loop gave up: max-attempts, budget, permanent, …
//		class         TEXT NOT NULL,         -- the last error's class, e.g. 'http 503'
//		attempts      INTEGER NOT NULL,
//		first_failure TEXT NOT NULL,         -- UTC, 2006-01-02T15:04:05.000000000Z
//		last_failure  TEXT NOT NULL,         -- idem
//		last_error    TEXT NOT NULL,         -- the last error's message
//		grp           TEXT NOT NULL,         -- dlq.Letter.Group() when stored
//		record        TEXT NOT NULL,         -- the letter: dlq encoding (JSON), version 2 or 1
//		claim         TEXT,                  -- the replay holding the letter, if any
//		claimed_until INTEGER                -- when that claim lapses (Unix ns)
//	) STRICT;
//	CREATE INDEX dlq_letters_summary ON dlq_letters (grp, source, stop_reason, class, last_failure);
//	CREATE TABLE dlq_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT; -- schema_version = 3
//
// The record is the truth; the other columns copy parts of it for queries
// — filters, pages (LIMIT and OFFSET) and Summarize, whose counts, groups
// and histograms are SQL aggregates over the summary index, reading a
// record only for each group's latest letter — and for an operator's, such
// as
//
//	sqlite3 dlq.db "SELECT grp, count(*), max(last_error) FROM dlq_letters GROUP BY grp ORDER BY 2 DESC"
//	sqlite3 dlq.db "SELECT json_extract(record, '$.failures') FROM dlq_letters WHERE id = '…'"
//
// A letter's group is the one computed when it was stored (the grp
// column): filters and Summarize read it, and do not recompute it.
//
// Open creates the tables, migrates a file of schema version 1 (whose
// stop_reason column was named reason; its records, encoding version 1,
// are read as they are) or 2 (which lacked the summary index), and refuses a file whose schema is newer than this
// code.
//
// # Defaults
//
//	| setting        | default                             | change with          |
//	|----------------|-------------------------------------|----------------------|
//	| journal        | WAL, synchronous=FULL               | —                    |
//	| busy timeout   | 5s                                  | Config.BusyTimeout   |
//	| replay claim   | lapses after 5m (a replayer died)   | Config.ClaimTimeout  |
//	| bound          | none but the disk                   | —                    |
package sqlite
