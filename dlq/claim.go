package dlq

import (
	"context"
	"errors"
	"fmt"

	"github.com/retrykit/retry/internal/argerr"
)

// Claim is one replay's hold on one letter, as a Claimer hands it out.
type Claim struct {
	ID     string // the letter's id
	Token  string // unique to this replay: only its holder acknowledges or releases the claim
	Record []byte // the letter as it was claimed, in the encoding (Encode)
}

// Claimer is the storage side of Queue.Replay, for the author of a queue:
// ReplayClaimed runs the replay protocol over it, so that every queue
// replays the same way. A Claimer's methods are called with a context that
// is not cancelled once the job was handed to the Enqueuer.
//
// Claim takes the letter id for one replay, under a token no other replay
// has, unless another replay holds it (ErrClaimed) or it does not exist
// (ErrNotFound). A claim lapses after a while, so that a replayer that died
// does not hold a letter for ever (that while is the queue's); a lapsed
// claim may be taken by another replay, but until then it still marks the
// letter as being replayed (a Put over it is a new death, not a duplicate).
//
// Ack removes the letter once its job was enqueued, if the claim still holds
// — lapsed or not, so long as no other replay took it. It keeps the letter
// and returns nil if a Put of a new death replaced it during the replay (the
// record differs from c.Record): that is a new letter. Otherwise — another
// replay took the letter after the claim lapsed, and holds or removed it —
// it returns an error matching ErrClaimLapsed, and keeps the letter.
//
// Release drops the claim, if it still holds, and keeps the letter.
type Claimer interface {
	Claim(ctx context.Context, id string) (Claim, error)
	Ack(ctx context.Context, c Claim) error
	Release(ctx context.Context, c Claim) error
}

// ReplayClaimed implements Queue.Replay over c: it claims the letter id,
// hands its job to to, and acknowledges the claim (removing the letter) if to
// succeeded; otherwise — to failed, or panicked — it releases the claim and
// returns to's error. Once the job is handed to to, the claim is settled
// whatever happens to ctx: a letter left claimed would wait for its claim to
// lapse.
//
// A nil Claimer, and a nil context or Enqueuer (a nil EnqueueFunc
// included) or an empty id, are a *retry.InvalidError, named after
// "dlq.Queue.Replay" — the method the caller called — before anything is
// claimed.
func ReplayClaimed(ctx context.Context, c Claimer, id string, to Enqueuer) (err error) {
	if c == nil {
		return argerr.New("dlq.ReplayClaimed", nil, "the Claimer must not be nil")
	}
	if err := checkReplay("dlq.Queue.Replay", ctx, id, to); err != nil {
		return err
	}
	cl, err := c.Claim(ctx, id)
	if err != nil {
		return err
	}
	settle := context.WithoutCancel(ctx)
	enqueued := false
	defer func() {
		if !enqueued {
			err = errors.Join(err, c.Release(settle, cl))
		}
	}()
	l, err := Decode(cl.Record)
	if err != nil {
		return fmt.Errorf("dlq: letter %s: %w", id, err)
	}
	if err := to.Enqueue(ctx, l.Job); err != nil {
		return fmt.Errorf("dlq: replay %s: %w", id, err)
	}
	enqueued = true
	if err := c.Ack(settle, cl); err != nil {
		return fmt.Errorf("dlq: replay %s: the job was enqueued, but: %w", id, err)
	}
	return nil
}

func checkReplay(name string, ctx context.Context, id string, to Enqueuer) error {
	if id == "" {
		return argerr.New(name, id, "the letter id must not be empty")
	}
	return checkEnqueuer(name, ctx, to)
}

// checkCall, called first in each method of a queue, refuses bad arguments
// before any work: the *retry.InvalidError of the call name (e.g.
// "dlq.NewMemory.Get") if the queue is not ready — nil, or not made by its
// constructor — or ctx is nil, or one of ids is empty; nil otherwise.
func checkCall(name string, ready bool, ctx context.Context, ids ...string) error {
	if !ready {
		return argerr.New(name, nil, "the queue is nil, or was not made by its constructor")
	}
	if err := checkContext(name, ctx); err != nil {
		return err
	}
	for _, id := range ids {
		if id == "" {
			return argerr.New(name, id, "the letter id must not be empty")
		}
	}
	return nil
}
