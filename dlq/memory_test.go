package dlq_test

import (
	"context"
	"errors"
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/queuetest"
)

func TestMemoryConformance(t *testing.T) {
	queuetest.Run(t, func(t *testing.T) dlq.Queue { return memQueue() })
}

func TestMemoryIsBounded(t *testing.T) {
	q, err := dlq.NewMemory(2)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		if _, err := q.Put(ctx, sample(id)); err != nil {
			t.Fatal(err)
		}
	}
	if stored, err := q.Put(ctx, sample("c")); stored || !errors.Is(err, dlq.ErrFull) {
		t.Fatalf("Put beyond the bound = %v, %v; want false, ErrFull", stored, err)
	}
	if stored, err := q.Put(ctx, sample("a")); stored || err != nil {
		t.Fatalf("a duplicate Put when full = %v, %v; want false, nil (not an error)", stored, err)
	}
	if err := q.Discard(ctx, dlq.LetterID("test", "a")); err != nil {
		t.Fatal(err)
	}
	if stored, err := q.Put(ctx, sample("c")); !stored || err != nil {
		t.Fatalf("Put after a discard = %v, %v; want true, nil", stored, err)
	}
}

func TestNewMemoryRefusesANegativeBound(t *testing.T) {
	_, err := dlq.NewMemory(-1)
	var inv *retry.InvalidError
	if !errors.As(err, &inv) || inv.Name != "dlq.NewMemory" || inv.Value != -1 {
		t.Fatalf("NewMemory(-1) = %v; want an *InvalidError naming dlq.NewMemory and -1", err)
	}
}
