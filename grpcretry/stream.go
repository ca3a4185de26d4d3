package grpcretry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/stream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Stream is a grpc.StreamClientInterceptor.
//
// A server-streaming call, and a client-streaming or bidirectional one
// declared with WithReplayableStreams, is retried until its first message
// arrives: the stream opens at the first RecvMsg, and each
// attempt opens it anew and sends again what the caller sent so far. A
// failure after the first message is never retried: RecvMsg returns a
// *stream.Error[any] with the messages delivered so far (the same rule and
// type as stream.Open). The Retrier's attempt timeout bounds the wait for the
// first message only. Calling Header or Context before the first RecvMsg
// opens the stream once, without retries: the caller asked for that
// attempt's header or context, and may act on it (grpc-go commits a stream
// on Context likewise).
//
// Any other client-streaming or bidirectional call is not replayed: only its
// opening is retried, which sends no message. A stream's attempts are made
// one at a time, with or without WithHedging.
func (i *Interceptor) Stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	i, err := i.ready()
	switch {
	case err != nil:
		return nil, err
	case ctx == nil || desc == nil || streamer == nil:
		return nil, invalid("grpcretry.Interceptor.Stream", nil, "the context, desc and streamer must not be nil")
	}
	if ctx, err = i.callContext(ctx, cc, method); err != nil {
		return nil, err
	}
	s := &clientStream{i: i, ctx: ctx, desc: desc, cc: cc, method: method, streamer: streamer, opts: opts}
	if desc.ServerStreams && !desc.ClientStreams || i.replayable[method] {
		return s, nil // opened by the first RecvMsg
	}
	if err := i.r.Do(ctx, s.openOnly); err != nil {
		return nil, callError(ctx, err)
	}
	return s.cur, nil
}

// clientStream is a stream retried until its first message.
type clientStream struct {
	i        *Interceptor
	ctx      context.Context // the caller's, with the call's keys
	desc     *grpc.StreamDesc
	cc       *grpc.ClientConn
	method   string
	streamer grpc.Streamer
	opts     []grpc.CallOption
	started  int // attempts started, one at a time

	mu     sync.Mutex // guards what a concurrent SendMsg shares with an attempt
	cur    grpc.ClientStream
	cancel context.CancelFunc // ends cur's context
	sent   []any              // what the caller sent before the first message
	size   int                // their size, as far as it is known (proto messages)
	closed bool               // the caller called CloseSend
	// receiving: the first RecvMsg is opening the stream, with retries.
	receiving bool
	// overflow: more than maxReplay was sent before the first message; the
	// stream is no longer replayed, and keeps nothing once it is sent.
	overflow bool

	first     any  // where the first RecvMsg wants its message
	committed bool // a message arrived, or the stream was opened once: no more retries
	eof       bool // the first attempt found the stream empty
	n         int  // messages delivered
	partial   []any
	err       error // sticky: io.EOF, or the failure
}

// open opens a stream for an attempt: its context derives from the
// caller's, and the attempt's own (with its timeout) cancels it only until
// untie is called. A retried attempt says how many were sent before it
// (gRFC A6's grpc-previous-rpc-attempts).
func (s *clientStream) open(actx context.Context) (cs grpc.ClientStream, untie func() bool, err error) {
	sctx := s.ctx
	if s.started > 0 {
		sctx = metadata.AppendToOutgoingContext(sctx, previousAttempts, strconv.Itoa(s.started))
	}
	s.started++
	sctx, cancel := context.WithCancel(sctx)
	untie = context.AfterFunc(actx, cancel)
	cs, err = s.streamer(sctx, s.desc, s.cc, s.method, s.opts...)
	if err != nil {
		untie()
		cancel()
		return nil, nil, s.failed(actx, err, nil, false)
	}
	s.cur, s.cancel = cs, cancel
	return cs, untie, nil
}

// openOnly is the attempt of a stream that is not replayed: only its
// opening, which sends nothing.
func (s *clientStream) openOnly(actx context.Context) error {
	cs, untie, err := s.open(actx)
	if err != nil {
		return err
	}
	untie()
	s.cur = &ended{ClientStream: cs, cancel: s.cancel}
	return nil
}

// attempt opens the stream, sends what the caller sent, and waits for the
// first message.
func (s *clientStream) attempt(actx context.Context) error {
	s.drop()
	s.mu.Lock()
	cs, untie, err := s.open(actx)
	if err == nil {
		err = s.replay(cs)
	}
	s.mu.Unlock()
	if err == nil {
		err = cs.RecvMsg(s.first)
	}
	if untie != nil && !untie() && err == nil {
		err = errors.New("the stream was cancelled as its first message arrived")
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF):
		s.eof = true
		return nil
	case cs != nil: // open classified its own failure
		err = s.failed(actx, err, cs.Trailer(), true)
	}
	return err
}

// failed classifies an attempt's failure; a stream cancelled by the
// attempt's own timeout is reported as that timeout.
func (s *clientStream) failed(actx context.Context, err error, trailer metadata.MD, sent bool) error {
	if actx.Err() != nil && s.ctx.Err() == nil {
		err = fmt.Errorf("%w (the stream said: %v)", status.Error(codes.DeadlineExceeded, "grpcretry: no message within the attempt timeout"), err)
	}
	if s.overflow && sent {
		return classify.Mark(err, classify.Decision{Verdict: classify.Stop, Reason: classify.ReasonGRPCReplayOverflow})
	}
	return s.i.failed(s.ctx, err, trailer, sent, s.method)
}

// maxReplay is how many bytes of messages a replayed stream keeps before its
// first reply, as grpc-go's retry buffer (256 KiB per call): past it, the
// stream is sent once, and a failure before its first reply ends the call
// (classify.ReasonGRPCReplayOverflow). Messages that are not proto messages
// are not counted.
const maxReplay = 256 << 10

// keep keeps m to be sent again, and counts it against maxReplay.
func (s *clientStream) keep(m any) {
	s.sent = append(s.sent, m)
	if pm, ok := m.(proto.Message); ok {
		s.size += proto.Size(pm)
	}
	s.overflow = s.overflow || s.size > maxReplay
}

// replay sends again what the caller sent, on a new attempt's stream.
func (s *clientStream) replay(cs grpc.ClientStream) error {
	for _, m := range s.sent {
		if err := cs.SendMsg(m); err != nil && !errors.Is(err, io.EOF) {
			return err // io.EOF: the stream ended; RecvMsg says why
		}
	}
	if s.overflow {
		s.sent = nil // sent once; a failure now ends the call
	}
	if s.closed {
		return cs.CloseSend()
	}
	return nil
}

// drop ends the previous attempt's stream.
func (s *clientStream) drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
		s.cur, s.cancel = nil, nil
	}
}

// start runs the retry loop for the first message, into m.
func (s *clientStream) start(m any) error {
	s.first = m
	s.mu.Lock()
	s.receiving = true
	s.mu.Unlock()
	err := s.i.r.Do(s.ctx, s.attempt)
	s.first = nil
	s.mu.Lock()
	s.committed, s.sent, s.receiving = true, nil, false // nothing will be replayed any more
	s.mu.Unlock()
	switch {
	case err != nil:
		s.drop()
		return callError(s.ctx, err)
	case s.eof:
		s.end(io.EOF)
		return io.EOF
	}
	s.deliver(m)
	return nil
}

// RecvMsg receives the next message: the first through the retry loop,
// the others from the stream that delivered it.
func (s *clientStream) RecvMsg(m any) error {
	switch {
	case s.err != nil:
		return s.err
	case !s.committed:
		if err := s.start(m); err != nil {
			s.err = err
			return err
		}
		return nil
	}
	err := s.cur.RecvMsg(m)
	switch {
	case err == nil:
		s.deliver(m)
		return nil
	case errors.Is(err, io.EOF):
		s.end(io.EOF)
	default:
		s.end(&stream.Error[any]{Delivered: s.n, Partial: s.partial, Err: err})
	}
	return s.err
}

// deliver counts m, keeping it for a partial output while there is room.
func (s *clientStream) deliver(m any) {
	s.n++
	if len(s.partial) < stream.MaxPartial {
		s.partial = append(s.partial, m)
	}
}

// end records how the stream ended and releases its context.
func (s *clientStream) end(err error) {
	s.err, s.partial = err, nil
	if s.cancel != nil {
		s.cancel()
	}
}

// SendMsg sends m; before the first message arrives it is also kept, to be
// sent again by a new attempt.
func (s *clientStream) SendMsg(m any) error {
	s.mu.Lock()
	if !s.committed {
		defer s.mu.Unlock()
		s.keep(m)
		if s.cur == nil {
			return nil // sent when the stream opens
		}
		if s.overflow {
			s.sent = nil // sent now, and never again
		}
		if err := s.cur.SendMsg(m); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		return nil // io.EOF: the attempt failed; the next one sends m again
	}
	cur := s.cur
	s.mu.Unlock()
	if cur == nil {
		return io.EOF // the stream failed to open: RecvMsg says why
	}
	return cur.SendMsg(m)
}

// CloseSend closes the sending side, now or when the stream opens.
func (s *clientStream) CloseSend() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.cur == nil {
		return nil
	}
	return s.cur.CloseSend()
}

// Header returns the header of the stream's attempt; before the first
// message it opens the stream once, without retries.
func (s *clientStream) Header() (metadata.MD, error) {
	cur, err := s.commit()
	if cur == nil {
		return nil, err
	}
	return cur.Header()
}

// commit opens the stream once, without retries, unless it is open or
// opening: the caller asked for what only an open stream has (its header,
// its context), and may act on it. It returns the open stream, or nil and
// why there is none.
func (s *clientStream) commit() (grpc.ClientStream, error) {
	s.mu.Lock()
	opened := s.committed || s.cur != nil || s.receiving
	s.mu.Unlock()
	if !opened {
		if err := s.openOnce(); err != nil {
			s.err = err
			return nil, err
		}
	}
	s.mu.Lock()
	cur := s.cur
	s.mu.Unlock()
	if cur == nil {
		return nil, s.err
	}
	return cur, nil
}

// openOnce opens the stream and sends what the caller sent, once.
func (s *clientStream) openOnce() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.committed = true
	cs, untie, err := s.open(s.ctx)
	if err != nil {
		return err
	}
	untie()
	err = s.replay(cs)
	s.sent = nil
	return err
}

// Trailer returns the trailer of the stream's attempt, once it has ended.
func (s *clientStream) Trailer() metadata.MD {
	s.mu.Lock()
	cur := s.cur
	s.mu.Unlock()
	if cur == nil {
		return nil
	}
	return cur.Trailer()
}

// Context returns the context of the stream's attempt. Before the first
// message it opens the stream once, without retries, as grpc-go's stream
// commits its attempt when Context is called: the caller may hand the
// context on, and a retry would swap it for another attempt's. It returns
// the call's context if the stream could not open (RecvMsg says why), or
// while the first RecvMsg is still opening it.
func (s *clientStream) Context() context.Context {
	cur, _ := s.commit()
	if cur == nil {
		return s.ctx
	}
	return cur.Context()
}

// ended releases a stream's context when the stream ends.
type ended struct {
	grpc.ClientStream
	cancel context.CancelFunc
}

// RecvMsg receives m, and releases the context after the last message.
func (e *ended) RecvMsg(m any) error {
	err := e.ClientStream.RecvMsg(m)
	if err != nil {
		e.cancel()
	}
	return err
}
