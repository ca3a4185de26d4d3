package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

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

func ExampleQueue_Summarize() {
	dir, _ := os.MkdirTemp("", "dlq")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	q, err := sqlite.Open(ctx, filepath.Join(dir, "dlq.db"), sqlite.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer q.Close()
	for i, msg := range []string{"timeout after 3012ms on 10.0.0.7", "timeout after 998ms on 10.0.0.9", "no such model"} {
		l, _ := dlq.NewLetter(dlq.Job{ID: fmt.Sprint(i), Source: "llm-jobs"}, errors.New(msg), time.Unix(int64(i), 0))
		q.Put(ctx, l)
	}
	// SQL adds the letters up: only each group's latest letter is read.
	s, _ := q.Summarize(ctx, dlq.Filter{Source: "llm-jobs"})
	fmt.Println(s.Count, s.ByStopReason)
	for _, g := range s.Groups {
		fmt.Println(g.Count, g.Signature)
	}
	// Output:
	// 3 map[failed:3]
	// 2 *errors.errorString [unclassified] timeout after <n>ms on <addr>
	// 1 *errors.errorString [unclassified] no such model
}
