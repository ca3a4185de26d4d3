package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/retrykit/retry"
)

// Chunks is a stream of chunks, such as a streamed LLM completion or
// server-sent events: Next returns the next chunk, and io.EOF after the last;
// Close releases the stream.
type Chunks[T any] interface {
	Next() (T, error)
	Close() error
}

// MaxPartial is how many delivered chunks a Stream keeps for the partial
// output of an Error: the first MaxPartial. A stream that ends normally keeps
// nothing once it has ended.
const MaxPartial = 1024

// Error is the failure of a stream after it delivered chunks. It is
// never retried: the delivered part was already generated (and billed), so a
// new attempt would be a second generation, not a resumption. It carries what
// was delivered, for the caller to decide what to do with it.
type Error[T any] struct {
	Delivered int   // chunks delivered before the failure
	Partial   []T   // the first min(Delivered, MaxPartial) of them
	Err       error // the failure
}

// Error returns "stream: broke after N chunk(s), not retried: <err>".
func (e *Error[T]) Error() string {
	return fmt.Sprintf("stream: broke after %d chunk(s), not retried: %v", e.Delivered, e.Err)
}

// Unwrap returns the failure.
func (e *Error[T]) Unwrap() error { return e.Err }

// Final reports true: no enclosing retry loop may retry a stream that broke
// after its first chunk.
func (e *Error[T]) Final() bool { return true }

// Stream is a stream opened with retries. Read it with Next or All, and
// Close it. It is not safe for concurrent use.
type Stream[T any] struct {
	chunks  Chunks[T]
	cancel  context.CancelFunc
	first   T
	pending bool  // first has not been returned yet
	partial []T   // the first MaxPartial chunks delivered
	n       int   // chunks delivered
	err     error // sticky: io.EOF or a *Error
	stats   retry.Stats
}

// Open opens a stream through r: open is retried, under r's policy,
// until the stream delivers its first chunk (or ends empty). A failure
// before the first chunk — the server refused the stream with an ordinary
// error — is classified and retried like any other; it returns an *Error. A
// failure after it is never retried: Next returns a *Error with the
// partial output.
//
// open receives a context that lives as long as the stream. r's attempt
// timeout, if any, bounds the wait for the first chunk only.
func Open[T any](ctx context.Context, r *retry.Retrier, open func(context.Context) (Chunks[T], error)) (*Stream[T], error) {
	if open == nil {
		return nil, &retry.InvalidError{Name: "stream.Open", Value: nil, Err: errors.New("open must not be nil")}
	}
	s := &Stream[T]{}
	_, st, err := retry.Value(ctx, r, func(actx context.Context) (struct{}, error) {
		return struct{}{}, s.attempt(ctx, actx, open)
	})
	s.stats = st
	if err != nil {
		return nil, err
	}
	return s, nil
}

// attempt opens the stream and reads its first chunk. The stream's context
// derives from the caller's; the attempt's own context (with its timeout)
// cancels it only until the first chunk arrives.
func (s *Stream[T]) attempt(ctx, actx context.Context, open func(context.Context) (Chunks[T], error)) error {
	sctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(actx, cancel)
	chunks, err := open(sctx)
	if err != nil {
		stop()
		cancel()
		return attemptErr(ctx, actx, err)
	}
	first, err := chunks.Next()
	stop()
	switch {
	case err == nil:
		s.chunks, s.cancel, s.first, s.pending = chunks, cancel, first, true
		return nil
	case errors.Is(err, io.EOF): // an empty stream is a success
		s.chunks, s.cancel, s.err = chunks, cancel, io.EOF
		return nil
	}
	_ = chunks.Close()
	cancel()
	return attemptErr(ctx, actx, err)
}

// attemptErr reports a stream cancelled by the attempt's own timeout as that
// timeout, not as the cancellation the stream saw.
func attemptErr(ctx, actx context.Context, err error) error {
	if actx.Err() != nil && ctx.Err() == nil {
		return fmt.Errorf("no first chunk within the attempt timeout: %w (the stream said: %v)", context.Cause(actx), err)
	}
	return err
}

// Next returns the next chunk; io.EOF after the last; after a failure, the
// *Error, every time.
func (s *Stream[T]) Next() (T, error) {
	var zero T
	switch {
	case s == nil || s.chunks == nil:
		return zero, &retry.InvalidError{Name: "stream.Stream", Value: nil, Err: errors.New("not opened (use stream.Open)")}
	case s.pending:
		s.pending = false
		return s.deliver(s.first), nil
	case s.err != nil:
		return zero, s.err
	}
	v, err := s.chunks.Next()
	switch {
	case err == nil:
		return s.deliver(v), nil
	case errors.Is(err, io.EOF):
		s.err, s.partial = io.EOF, nil // a complete stream keeps nothing
	default:
		s.err = &Error[T]{Delivered: s.n, Partial: s.partial, Err: err}
		s.partial = nil
	}
	return zero, s.err
}

// deliver counts v, keeping it for a partial output while there is room.
func (s *Stream[T]) deliver(v T) T {
	s.n++
	if len(s.partial) < MaxPartial {
		s.partial = append(s.partial, v)
	}
	return v
}

// All returns an iterator over the remaining chunks. It ends after the last
// chunk, or yields the failure (a *Error) with a zero chunk and ends.
func (s *Stream[T]) All() iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for {
			v, err := s.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if !yield(v, err) || err != nil {
				return
			}
		}
	}
}

// Stats reports the attempts and waits it took to open the stream.
func (s *Stream[T]) Stats() retry.Stats {
	if s == nil {
		return retry.Stats{}
	}
	return s.stats
}

// Close releases the stream. Closing a nil or unopened Stream does nothing.
func (s *Stream[T]) Close() error {
	if s == nil || s.chunks == nil {
		return nil
	}
	defer s.cancel()
	return s.chunks.Close()
}
