package matrix_test

import (
	"context"
	"database/sql"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"
	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/grpcretry"
	"github.com/retrykit/retry/hedge"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/internal/pgtest"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/sqlretry"
	"github.com/retrykit/retry/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// The matrix: every feature of the pipeline (a column) at every entry point
// of the library (a row). Each cell is a behaviour, checked against a
// dependency that plays a script and counts what reaches it — or, where an
// entry point cannot have the feature, the refusal the types make, checked
// too. Times are real but short: the entry points talk to real servers
// (net/http, grpc-go, PostgreSQL), which a fake clock cannot drive.
func TestEveryFeatureAtEveryEntryPoint(t *testing.T) {
	for _, e := range entries() {
		t.Run(e.name, func(t *testing.T) {
			for _, c := range columns() {
				t.Run(c.name, func(t *testing.T) { c.cell(t, e) })
			}
		})
	}
}

// step is what the dependency does for one attempt that reaches it.
type step int

const (
	ok   step = iota // answers at once
	fail             // a transient failure: HTTP 503, gRPC UNAVAILABLE, SQLSTATE 40001
	busy             // unavailable, come back in 2s: 503 with Retry-After: 2, UNAVAILABLE with a 2s pushback
	hang             // no answer until the attempt's context ends
	slow             // answers after slowFor
)

const (
	slowFor    = 300 * time.Millisecond
	hedgeAfter = 20 * time.Millisecond
	attemptFor = 60 * time.Millisecond
)

// dep plays its steps, one per attempt that reaches it (the last one
// repeats), and counts those attempts.
type dep struct {
	mu    sync.Mutex
	steps []step
	sent  int
}

func newDep(steps ...step) *dep { return &dep{steps: steps} }

func (d *dep) next() step {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sent++
	return d.steps[min(d.sent, len(d.steps))-1]
}

// play replaces the script for the calls to come; the count goes on.
func (d *dep) play(steps ...step) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.steps, d.sent = steps, 0
}

func (d *dep) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sent
}

// await does what a hang or a slow step takes, until ctx ends.
func await(ctx context.Context, s step) error {
	var after <-chan time.Time
	if s == slow {
		after = time.After(slowFor)
	}
	select {
	case <-after:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// call plays the next step as a Go error: what an operation of the user's
// returns.
func (d *dep) call(ctx context.Context) error {
	switch s := d.next(); s {
	case fail:
		return &classify.StatusError{Code: 503}
	case busy:
		return &classify.StatusError{Code: 503, Header: http.Header{"Retry-After": {"2"}}}
	case hang, slow:
		return await(ctx, s)
	}
	return nil
}

// An entry is a way into the library. setup builds it over d, with the
// Retrier opts make — and hedging, when hedged is set and the entry can
// hedge — and returns the function that makes one call.
type entry struct {
	name  string
	setup func(t *testing.T, d *dep, opts []retry.Option, hedged bool) func(context.Context) error
	// noHedging, when set, checks how the entry refuses hedging, which it
	// cannot do.
	noHedging func(t *testing.T, e entry)
}

func entries() []entry {
	return []entry{
		{name: "Do and Value", setup: doValue, noHedging: takesARetrier(retry.Value[int], 1)},
		{name: "Wrap", setup: wrap, noHedging: takesOptions},
		{name: "hedged calls", setup: hedged},
		{name: "httpretry", setup: httpTransport},
		{name: "grpcretry unary", setup: grpcUnary},
		{name: "grpcretry streams", setup: grpcStream, noHedging: streamsAreNotHedged},
		{name: "stream.Open", setup: streamOpen, noHedging: takesARetrier(stream.Open[int], 1)},
		{name: "sqlretry", setup: sqlTx, noHedging: takesARetrier(sqlretry.Tx, 1)},
	}
}

type column struct {
	name string
	cell func(t *testing.T, e entry)
}

// fast makes waits short, so that the cells run in milliseconds.
var fast = []retry.Option{retry.WithBackoff(backoff.Constant(time.Millisecond)), retry.WithJitter(jitter.None{})}

func with(opts ...retry.Option) []retry.Option {
	return append(append([]retry.Option{}, fast...), opts...)
}

func columns() []column {
	return []column{
		{"budget", func(t *testing.T, e entry) {
			d := newDep(fail, ok)
			err := e.setup(t, d, with(retry.WithBudget(refusingBudget{})), false)(t.Context())
			assert.ErrorIs(t, err, retry.ErrBudget, "the budget refused the retry")
			assert.Equal(t, 1, d.count(), "one attempt, no retry")
		}},
		{"limiter", func(t *testing.T, e entry) {
			d := newDep(ok)
			err := e.setup(t, d, with(retry.WithLimiter(refusingLimiter{})), false)(t.Context())
			assert.ErrorIs(t, err, retry.ErrLimited, "the limiter refused the call")
			assert.Zero(t, d.count(), "nothing sent")
		}},
		{"breaker", func(t *testing.T, e entry) {
			b, err := breaker.New(breaker.Config{Timeout: time.Hour, ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 1 }})
			require.NoError(t, err)
			d := newDep(fail)
			call := e.setup(t, d, with(retry.WithBreakers(b), retry.WithMaxAttempts(1)), false)
			require.Error(t, call(t.Context()), "the failure opens the breaker")
			require.Equal(t, 1, d.count())
			d.play(ok)
			err = call(t.Context())
			assert.ErrorIs(t, err, retry.ErrBreakerOpen)
			assert.ErrorIs(t, err, breaker.ErrOpen)
			assert.Zero(t, d.count(), "the open breaker sent nothing")
		}},
		{"cooldowns", func(t *testing.T, e entry) {
			cd, err := breaker.NewCooldowns(breaker.CooldownConfig{})
			require.NoError(t, err)
			d := newDep(busy)
			call := e.setup(t, d, with(retry.WithCooldowns(cd), retry.WithMaxAttempts(1), retry.WithMaxDelay(time.Second)), false)
			require.Error(t, call(t.Context()), "unavailable for 2s: the key cools down")
			require.Equal(t, 1, d.count())
			d.play(ok)
			start := time.Now()
			err = call(t.Context())
			assert.ErrorIs(t, err, retry.ErrWaitTooLong, "2s of cooldown is more than the call's 1s")
			assert.ErrorIs(t, err, breaker.ErrCooldown)
			assert.Zero(t, d.count(), "nothing sent to a key cooling down")
			assert.Less(t, time.Since(start), time.Second, "and it did not wait in vain")
		}},
		{"attempt timeout", func(t *testing.T, e entry) {
			d := newDep(hang, ok)
			err := e.setup(t, d, with(retry.WithAttemptTimeout(attemptFor), retry.Idempotent()), false)(t.Context())
			assert.NoError(t, err, "the hung attempt timed out, the next succeeded")
			assert.Equal(t, 2, d.count())
		}},
		{"hedging", func(t *testing.T, e entry) {
			if e.noHedging != nil {
				e.noHedging(t, e)
				return
			}
			var hedges counter
			d := newDep(slow, ok)
			err := e.setup(t, d, with(retry.Idempotent(), retry.WithObserver(&hedges)), true)(t.Context())
			assert.NoError(t, err)
			assert.Equal(t, 2, d.count(), "the slow attempt got a hedge, which answered")
			assert.Equal(t, 1, hedges.of(observe.HedgeStarted))
		}},
		{"observer", func(t *testing.T, e entry) {
			var seen counter
			d := newDep(fail, ok)
			err := e.setup(t, d, with(retry.WithObserver(&seen)), false)(t.Context())
			assert.NoError(t, err)
			assert.Equal(t, 2, d.count())
			assert.Equal(t, 2, seen.of(observe.AttemptDone), "each attempt")
			assert.Equal(t, 1, seen.of(observe.RetryScheduled), "the retry")
			assert.Zero(t, seen.of(observe.GaveUp))
		}},
	}
}

// refusingBudget refuses every retry; refusingLimiter every attempt.
type (
	refusingBudget  struct{}
	refusingLimiter struct{}
)

func (refusingBudget) Allow() bool                                  { return false }
func (refusingBudget) Record(budget.Attempt)                        {}
func (refusingLimiter) Acquire(context.Context, time.Duration) bool { return false }
func (refusingLimiter) Record(context.Context, limit.Outcome)       {}

// counter counts the events of each kind an observer hears.
type counter struct {
	mu sync.Mutex
	n  map[observe.Kind]int
}

func (c *counter) Observe(_ context.Context, e observe.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[observe.Kind]int{}
	}
	if !e.Deferred {
		c.n[e.Kind]++
	}
}

func (c *counter) of(k observe.Kind) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

func newRetrier(t *testing.T, opts ...retry.Option) *retry.Retrier {
	t.Helper()
	r, err := retry.New(opts...)
	require.NoError(t, err)
	return r
}

// The rows.

func doValue(t *testing.T, d *dep, opts []retry.Option, _ bool) func(context.Context) error {
	r := newRetrier(t, opts...)
	return func(ctx context.Context) error {
		_, _, err := retry.Value(ctx, r, func(ctx context.Context) (int, error) { return 1, d.call(ctx) })
		return err
	}
}

func wrap(_ *testing.T, d *dep, opts []retry.Option, _ bool) func(context.Context) error {
	return retry.Wrap(d.call, opts...)
}

func hedged(t *testing.T, d *dep, opts []retry.Option, hedged bool) func(context.Context) error {
	delay := time.Hour // the columns other than hedging must not see a hedge
	if hedged {
		delay = hedgeAfter
	}
	h, err := retry.NewHedger(newRetrier(t, append(opts, retry.Idempotent())...), hedge.Fixed(delay), 2)
	require.NoError(t, err)
	return func(ctx context.Context) error { return h.Do(ctx, d.call) }
}

func httpTransport(t *testing.T, d *dep, opts []retry.Option, hedged bool) func(context.Context) error {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch s := d.next(); s {
		case fail:
			w.WriteHeader(http.StatusServiceUnavailable)
		case busy:
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusServiceUnavailable)
		case hang, slow:
			if await(req.Context(), s) != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	var topts []httpretry.Option
	if hedged {
		topts = append(topts, httpretry.WithHedging(hedge.Fixed(hedgeAfter), 2))
	}
	client, err := httpretry.NewClient(newRetrier(t, opts...), topts...)
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	return func(ctx context.Context) error {
		var res httpretry.Result
		ctx, err := httpretry.WithResult(ctx, &res)
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return res.Err // why the call stopped on an error response; nil on success
	}
}

const (
	checkMethod = "/grpc.health.v1.Health/Check"
	watchMethod = "/grpc.health.v1.Health/Watch"
)

// health plays d for both of its methods.
type health struct {
	healthpb.UnimplementedHealthServer
	d *dep
}

// answer plays the next step: the error the server answers, or nil to go on.
func (h health) answer(ctx context.Context) error {
	switch s := h.d.next(); s {
	case fail:
		return status.Error(codes.Unavailable, "down")
	case busy:
		_ = grpc.SetTrailer(ctx, metadata.Pairs("grpc-retry-pushback-ms", "2000"))
		return status.Error(codes.Unavailable, "busy")
	case hang, slow:
		return await(ctx, s)
	}
	return nil
}

func (h health) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if err := h.answer(ctx); err != nil {
		return nil, err
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (h health) Watch(_ *healthpb.HealthCheckRequest, s healthpb.Health_WatchServer) error {
	if err := h.answer(s.Context()); err != nil {
		return err
	}
	return s.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
}

// grpcClient serves d on a loopback grpc-go server and dials it through an
// Interceptor built on opts.
func grpcClient(t *testing.T, d *dep, opts []retry.Option, hedged bool) healthpb.HealthClient {
	t.Helper()
	lis, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health{d: d})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	iopts := []grpcretry.Option{grpcretry.WithIdempotentMethods(checkMethod, watchMethod)}
	if hedged {
		iopts = append(iopts, grpcretry.WithHedging(hedge.Fixed(hedgeAfter), 2))
	}
	i, err := grpcretry.New(newRetrier(t, opts...), iopts...)
	require.NoError(t, err)
	dopts, err := i.DialOptions()
	require.NoError(t, err)
	cc, err := grpc.NewClient(lis.Addr().String(), append(dopts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
	return healthpb.NewHealthClient(cc)
}

func grpcUnary(t *testing.T, d *dep, opts []retry.Option, hedged bool) func(context.Context) error {
	c := grpcClient(t, d, opts, hedged)
	return func(ctx context.Context) error {
		_, err := c.Check(ctx, &healthpb.HealthCheckRequest{})
		return err
	}
}

func grpcStream(t *testing.T, d *dep, opts []retry.Option, hedged bool) func(context.Context) error {
	c := grpcClient(t, d, opts, hedged)
	return func(ctx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		s, err := c.Watch(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			return err
		}
		_, err = s.Recv() // the first reply: what the retries are for
		return err
	}
}

// chunks is a stream of one chunk, which the step may hold back.
type chunks struct {
	ctx  context.Context
	s    step
	done bool
}

func (c *chunks) Next() (int, error) {
	if c.done {
		return 0, io.EOF
	}
	if c.s == hang || c.s == slow {
		if err := await(c.ctx, c.s); err != nil {
			return 0, err
		}
	}
	c.done = true
	return 1, nil
}

func (c *chunks) Close() error { return nil }

func streamOpen(t *testing.T, d *dep, opts []retry.Option, _ bool) func(context.Context) error {
	r := newRetrier(t, opts...)
	return func(ctx context.Context) error {
		s, err := stream.Open(ctx, r, func(ctx context.Context) (stream.Chunks[int], error) {
			switch st := d.next(); st {
			case fail:
				return nil, &classify.StatusError{Code: 503}
			case busy:
				return nil, &classify.StatusError{Code: 503, Header: http.Header{"Retry-After": {"2"}}}
			default:
				return &chunks{ctx: ctx, s: st}, nil
			}
		})
		if err != nil {
			return err
		}
		defer s.Close()
		_, err = s.Next()
		return err
	}
}

func sqlTx(t *testing.T, d *dep, opts []retry.Option, _ bool) func(context.Context) error {
	db, err := sql.Open("pgx", pgtest.DB(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	r := newRetrier(t, opts...)
	return func(ctx context.Context) error {
		_, err := sqlretry.Tx(ctx, r, db, nil, func(ctx context.Context, tx *sql.Tx) error {
			var q string
			switch d.next() {
			case fail:
				q = `DO $$ BEGIN RAISE EXCEPTION 'could not serialize' USING ERRCODE = 'serialization_failure'; END $$`
			case busy: // the transaction calls an API that is unavailable
				return &classify.StatusError{Code: 503, Header: http.Header{"Retry-After": {"2"}}}
			case hang:
				q = `SELECT pg_sleep(30)`
			case slow:
				q = `SELECT pg_sleep(0.3)`
			default:
				q = `SELECT 1`
			}
			_, err := tx.ExecContext(ctx, q)
			return err
		})
		return err
	}
}

// The refusals.

// takesARetrier checks that the entry fn takes a *retry.Retrier as its
// argument number i: the type of a Retrier, whose calls make their attempts
// one at a time; a *retry.Hedger cannot be passed.
func takesARetrier(fn any, i int) func(*testing.T, entry) {
	return func(t *testing.T, e entry) {
		in := reflect.TypeOf(fn).In(i)
		assert.Equal(t, reflect.TypeFor[*retry.Retrier](), in, "%s takes a Retrier", e.name)
		assert.False(t, reflect.TypeFor[*retry.Hedger]().AssignableTo(in), "%s cannot be given a Hedger", e.name)
	}
}

// takesOptions checks that Wrap builds its Retrier from options, among which
// none hedges: the hedged twin of an operation is a Hedger's Do.
func takesOptions(t *testing.T, _ entry) {
	in := reflect.TypeOf(retry.Wrap).In(1)
	assert.Equal(t, reflect.TypeFor[[]retry.Option](), in)
}

// streamsAreNotHedged checks the documented refusal: an Interceptor with
// WithHedging hedges unary calls, and makes a stream's attempts one at a
// time.
func streamsAreNotHedged(t *testing.T, e entry) {
	var hedges counter
	d := newDep(slow, ok)
	err := e.setup(t, d, with(retry.Idempotent(), retry.WithObserver(&hedges)), true)(t.Context())
	assert.NoError(t, err)
	assert.Equal(t, 1, d.count(), "the slow attempt was waited for, not hedged")
	assert.Zero(t, hedges.of(observe.HedgeStarted))
}
