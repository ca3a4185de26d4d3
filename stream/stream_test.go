package stream_test

import (
	"context"
	"errors"
	"io"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeStream yields its chunks, then fails with err (io.EOF: ends).
type fakeStream struct {
	chunks []string
	err    error
	delay  time.Duration // before the first chunk
	ctx    context.Context
	closed bool
}

func (f *fakeStream) Next() (string, error) {
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-f.ctx.Done():
			return "", f.ctx.Err()
		}
		f.delay = 0
	}
	if len(f.chunks) == 0 {
		return "", f.err
	}
	c := f.chunks[0]
	f.chunks = f.chunks[1:]
	return c, nil
}

func (f *fakeStream) Close() error { f.closed = true; return nil }

// server opens streams from a script: each open gets the next entry, an
// error to refuse the stream or a stream to return.
type server struct {
	opens  int
	script []any
	last   *fakeStream
}

func (s *server) open(ctx context.Context) (stream.Chunks[string], error) {
	entry := s.script[min(s.opens, len(s.script)-1)]
	s.opens++
	switch e := entry.(type) {
	case error:
		return nil, e
	case *fakeStream:
		e.ctx = ctx
		s.last = e
		return e, nil
	}
	panic("bad script")
}

func collect(s *stream.Stream[string]) ([]string, error) {
	var got []string
	for c, err := range s.All() {
		if err != nil {
			return got, err
		}
		got = append(got, c)
	}
	return got, nil
}

func TestStreams(t *testing.T) {
	t.Run("a refusal before the first chunk is retried", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := &server{script: []any{httpErr(503, -1), &fakeStream{chunks: []string{"Hel", "lo"}, err: io.EOF}}}
			s, err := stream.Open(t.Context(), exact(t), srv.open)
			require.NoError(t, err)
			defer s.Close()
			got, err := collect(s)
			require.NoError(t, err)
			assert.Equal(t, []string{"Hel", "lo"}, got)
			assert.Equal(t, 2, srv.opens)
			assert.Equal(t, retry.Stats{Attempts: 2, Waited: 100 * ms, Elapsed: 100 * ms, Winner: 2}, s.Stats())
		})
	})
	t.Run("a failure on the first read is retried too", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			broken := &fakeStream{err: errReset}
			srv := &server{script: []any{broken, &fakeStream{chunks: []string{"ok"}, err: io.EOF}}}
			s, err := stream.Open(t.Context(), exact(t), srv.open)
			require.NoError(t, err)
			got, err := collect(s)
			require.NoError(t, err)
			assert.Equal(t, []string{"ok"}, got)
			assert.True(t, broken.closed, "the failed attempt's stream was closed")
		})
	})
	t.Run("a failure after the first chunk is never retried and keeps the partial output", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := &server{script: []any{&fakeStream{chunks: []string{"The ", "answer "}, err: errReset}}}
			s, err := stream.Open(t.Context(), exact(t), srv.open)
			require.NoError(t, err)
			got, err := collect(s)
			assert.Equal(t, []string{"The ", "answer "}, got)
			assert.Equal(t, 1, srv.opens, "no second generation")
			var serr *stream.Error[string]
			require.ErrorAs(t, err, &serr)
			assert.Equal(t, 2, serr.Delivered)
			assert.Equal(t, []string{"The ", "answer "}, serr.Partial)
			assert.ErrorIs(t, err, errReset)
			assert.Equal(t, "stream: broke after 2 chunk(s), not retried: connection reset by peer", err.Error())
			_, again := s.Next()
			assert.Same(t, err, again, "the failure is sticky")
		})
	})
	t.Run("an enclosing retry loop does not retry a broken stream either", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := &server{script: []any{&fakeStream{chunks: []string{"a"}, err: errReset}}}
			err := exact(t).Do(t.Context(), func(ctx context.Context) error {
				s, err := stream.Open(ctx, exact(t), srv.open)
				if err != nil {
					return err
				}
				_, err = collect(s)
				return err
			})
			assert.Equal(t, 1, srv.opens)
			assert.ErrorIs(t, err, retry.ErrPermanent)
		})
	})
	t.Run("a permanent refusal is not retried", func(t *testing.T) {
		srv := &server{script: []any{httpErr(400, -1)}}
		_, err := stream.Open(t.Context(), exact(t), srv.open)
		assert.Equal(t, 1, srv.opens)
		assert.ErrorIs(t, err, retry.ErrPermanent)
		var se *classify.StatusError
		assert.ErrorAs(t, err, &se)
	})
	t.Run("an empty stream is a success", func(t *testing.T) {
		srv := &server{script: []any{&fakeStream{err: io.EOF}}}
		s, err := stream.Open(t.Context(), exact(t), srv.open)
		require.NoError(t, err)
		got, err := collect(s)
		require.NoError(t, err)
		assert.Empty(t, got)
		require.NoError(t, s.Close())
	})
	t.Run("the attempt timeout bounds the wait for the first chunk only", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			slow := &fakeStream{delay: 3 * time.Second, chunks: []string{"late"}, err: io.EOF}
			fast := &fakeStream{delay: 500 * ms, chunks: []string{"a", "b"}, err: io.EOF}
			srv := &server{script: []any{slow, fast}}
			r := exact(t, retry.WithAttemptTimeout(time.Second), retry.Idempotent())
			s, err := stream.Open(t.Context(), r, srv.open)
			require.NoError(t, err)
			assert.True(t, slow.closed, "the slow stream timed out before its first chunk and was closed")
			time.Sleep(2 * time.Second) // well past the attempt timeout: the stream must still be readable
			got, err := collect(s)
			require.NoError(t, err)
			assert.Equal(t, []string{"a", "b"}, got)
		})
	})
	t.Run("a stream that times out before its first chunk is gated like any timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := &server{script: []any{&fakeStream{delay: time.Hour}}}
			_, err := stream.Open(t.Context(), exact(t, retry.WithAttemptTimeout(time.Second)), srv.open)
			assert.Equal(t, 1, srv.opens)
			assert.ErrorIs(t, err, retry.ErrNotIdempotent)
		})
	})
	t.Run("closing cancels the stream's context", func(t *testing.T) {
		srv := &server{script: []any{&fakeStream{chunks: []string{"a"}, err: io.EOF}}}
		s, err := stream.Open(t.Context(), exact(t), srv.open)
		require.NoError(t, err)
		require.NoError(t, s.Close())
		assert.True(t, srv.last.closed)
		assert.ErrorIs(t, srv.last.ctx.Err(), context.Canceled)
	})
	t.Run("a nil open is refused", func(t *testing.T) {
		_, err := stream.Open[string](t.Context(), nil, nil)
		assert.ErrorIs(t, err, retry.ErrInvalid)
	})
	t.Run("the caller's cancellation stops the stream", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		srv := &server{script: []any{&fakeStream{chunks: []string{"a"}, err: io.EOF}}}
		s, err := stream.Open(ctx, exact(t), srv.open)
		require.NoError(t, err)
		cancel()
		assert.True(t, errors.Is(srv.last.ctx.Err(), context.Canceled))
		_ = s.Close()
	})
	t.Run("the partial output keeps the first MaxPartial chunks and counts them all", func(t *testing.T) {
		chunks := make([]string, stream.MaxPartial+10)
		for i := range chunks {
			chunks[i] = strconv.Itoa(i)
		}
		srv := &server{script: []any{&fakeStream{chunks: chunks, err: errReset}}}
		s, err := stream.Open(t.Context(), exact(t), srv.open)
		require.NoError(t, err)
		_, err = collect(s)
		var broke *stream.Error[string]
		require.ErrorAs(t, err, &broke)
		assert.Equal(t, stream.MaxPartial+10, broke.Delivered)
		assert.Len(t, broke.Partial, stream.MaxPartial)
		assert.Equal(t, "0", broke.Partial[0])
		_ = s.Close()
	})
}

func TestBadArgumentsDoNotPanic(t *testing.T) {
	opened := false
	open := func(context.Context) (stream.Chunks[string], error) { opened = true; return nil, io.EOF }
	var nilCtx context.Context
	r := exact(t)
	for name, call := range map[string]func() error{
		"Open with a nil open":    func() error { _, err := stream.Open[string](t.Context(), r, nil); return err },
		"Open with a nil Retrier": func() error { _, err := stream.Open(t.Context(), nil, open); return err },
		"Open with a nil context": func() error { _, err := stream.Open(nilCtx, r, open); return err },
		"Next on a nil Stream":    func() error { _, err := (*stream.Stream[string])(nil).Next(); return err },
		"Next on a zero Stream":   func() error { _, err := new(stream.Stream[string]).Next(); return err },
		"All on a zero Stream": func() error {
			for _, err := range new(stream.Stream[string]).All() {
				return err
			}
			return nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			assert.ErrorIs(t, call(), retry.ErrInvalid)
			assert.False(t, opened)
		})
	}
	assert.NoError(t, (*stream.Stream[string])(nil).Close())
	assert.NoError(t, new(stream.Stream[string]).Close())
	assert.Zero(t, new(stream.Stream[string]).Stats())
}
