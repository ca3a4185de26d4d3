package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/retrykit/retry/dlq"
)

// toVersion1 turns a new file back into what version 1 created: the
// stop_reason column named reason, no summary index, schema_version 1.
const toVersion1 = `ALTER TABLE dlq_letters RENAME COLUMN stop_reason TO reason;
DROP INDEX dlq_letters_summary;
UPDATE dlq_meta SET value = '1' WHERE key = 'schema_version';`

// recordV1 is a letter as version 1 stored it: encoding version 1.
const recordV1 = `{"v":1,"id":"baabc1e43114f0a6","job":{"id":"7","source":"llm-jobs","payload":null},"reason":"failed","attempts":1,"waited_ns":0,"elapsed_ns":0,"retry_after_ns":0,"first_failure":"2026-11-29T10:00:00Z","last_failure":"2026-11-29T10:00:00Z","last":{"attempt":1,"type":"*errors.errorString","error":"boom","verdict":"retry","class":"unclassified","retry_after_ns":0,"limit":0,"timeout":false,"delay_ns":0},"failures":[{"attempt":1,"type":"*errors.errorString","error":"boom","verdict":"retry","class":"unclassified","retry_after_ns":0,"limit":0,"timeout":false,"delay_ns":0}]}`

func TestAVersion1FileIsMigratedAndItsLettersRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dlq.db")
	open(t, path).Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(toVersion1)
	if err == nil {
		_, err = db.Exec(`INSERT INTO dlq_letters (id, source, job_id, reason, class, attempts, first_failure, last_failure, last_error, grp, record)
VALUES ('baabc1e43114f0a6', 'llm-jobs', '7', 'failed', 'unclassified', 1, '2026-11-29T10:00:00.000000000Z', '2026-11-29T10:00:00.000000000Z', 'boom', 'x', ?)`, recordV1)
	}
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // a second Open finds version 3 and changes nothing
		q := open(t, path)
		ls, err := q.List(context.Background(), dlq.Filter{StopReason: "failed"})
		if err != nil || len(ls) != 1 || ls[0].Job.ID != "7" || ls[0].StopReason != "failed" {
			t.Fatalf("List(stop reason failed) of a migrated file = %+v, %v; want the version 1 letter", ls, err)
		}
		q.Close()
	}
	db, _ = sql.Open("sqlite", path)
	defer db.Close()
	var v, reason string
	if err := db.QueryRow(`SELECT value FROM dlq_meta WHERE key = 'schema_version'`).Scan(&v); err != nil || v != "3" {
		t.Fatalf("schema_version = %q, %v; want 3", v, err)
	}
	var idx int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'dlq_letters_summary'`).Scan(&idx); err != nil || idx != 1 {
		t.Fatalf("the summary index: %d, %v; want it made by the migration", idx, err)
	}
	if err := db.QueryRow(`SELECT stop_reason FROM dlq_letters`).Scan(&reason); err != nil || reason != "failed" {
		t.Fatalf("stop_reason = %q, %v; want the column renamed, its values kept", reason, err)
	}
}
