package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/sqlite"
)

func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "dlq")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	q, err := sqlite.Open(ctx, filepath.Join(dir, "dlq.db"), sqlite.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer q.Close()

	r, _ := retry.New()
	job := dlq.Job{ID: "msg-1", Source: "llm-jobs", Payload: []byte(`{"prompt":"hi"}`)}
	err = dlq.Do(ctx, r, q, job, func(context.Context) error {
		return classify.Permanent(errors.New("prompt rejected: template variable missing")) // a bug
	})
	fmt.Println(errors.Is(err, dlq.ErrDeadLettered), dlq.LetterID(job.Source, job.ID))

	// After the fix, the job goes back to the work queue.
	rep, err := dlq.Replay(ctx, q, dlq.Filter{}, dlq.EnqueueFunc(func(ctx context.Context, j dlq.Job) error {
		fmt.Printf("enqueue %s to %s: %s\n", j.ID, j.Source, j.Payload)
		return nil
	}))
	fmt.Println(rep.Replayed, err)
	// Output:
	// true 9fa6dc9bdf55e27c
	// enqueue msg-1 to llm-jobs: {"prompt":"hi"}
	// [9fa6dc9bdf55e27c] <nil>
}
