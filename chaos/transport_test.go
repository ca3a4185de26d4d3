package chaos_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/chaos"
	"github.com/retrykit/retry/classify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// body is a request body that records whether it was closed.
type body struct {
	io.Reader
	closed bool
}

func (b *body) Close() error { b.closed = true; return nil }

func TestAThrottledRequestGetsItsResponseWithoutReachingTheServer(t *testing.T) {
	s := scenarioOf(t, chaos.Throttle(429, 2500*time.Millisecond))
	hits := 0
	base := roundTripper(func(*http.Request) (*http.Response, error) { hits++; return nil, nil })
	b := &body{Reader: strings.NewReader("charge 10")}
	req := post(t, "https://api.example.com/charges")
	req.Body = b
	resp, err := s.Transport(base).RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	assert.Equal(t, 429, resp.StatusCode)
	assert.Equal(t, "429 Too Many Requests", resp.Status)
	assert.Equal(t, "3", resp.Header.Get("Retry-After"), "rounded up: never sooner than asked")
	assert.Equal(t, "2500", resp.Header.Get("Retry-After-Ms"))
	assert.Equal(t, "Too Many Requests\n", string(text))
	assert.Equal(t, int64(len(text)), resp.ContentLength)
	assert.Same(t, req, resp.Request)
	assert.Equal(t, 0, hits)
	assert.True(t, b.closed, "a RoundTripper closes the request's body, even when it sends nothing")
	d := classify.Default(classify.ResponseError(resp))
	assert.Equal(t, 2500*time.Millisecond, d.RetryAfter)
}

func TestARespondFaultAnswersWhatTheTestChose(t *testing.T) {
	s := scenarioOf(t, chaos.Respond(200, `{"id":1}`))
	resp, err := s.Transport(nil).RoundTrip(get(t, "http://example.invalid/"))
	require.NoError(t, err)
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	assert.Equal(t, `{"id":1}`, string(text))
	assert.Empty(t, resp.Header.Get("Retry-After"))
}

func TestAValueFaultCannotBeAnHTTPResponse(t *testing.T) {
	s := scenarioOf(t, chaos.Value(1))
	_, err := s.Transport(answer(200, "")).RoundTrip(get(t, "http://example.com/"))
	assert.ErrorIs(t, err, retry.ErrInvalid)
}

func TestATimedOutRequestWasProcessedAndEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scenarioOf(t, chaos.Timeout(time.Minute))
		hits := 0
		base := roundTripper(func(req *http.Request) (*http.Response, error) { hits++; return answer(200, "done").RoundTrip(req) })
		t0 := time.Now()
		_, err := s.Transport(base).RoundTrip(get(t, "http://example.com/"))
		assert.EqualError(t, err, "read tcp example.com:80: i/o timeout")
		assert.Equal(t, time.Minute, time.Since(t0))

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		req := get(t, "https://example.com/").WithContext(ctx)
		_, err = s.Transport(base).RoundTrip(req)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 2, hits)
		assert.Equal(t, chaos.Stats{Calls: 2, Faults: 2, Processed: 2, Lost: 2}, s.Stats())
	})
}

func TestAStalledBodyBlocksThenTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scenarioOf(t, chaos.Stall(4, 10*time.Second))
		resp, err := s.Transport(answer(200, "hello world")).RoundTrip(get(t, "http://example.com:8080/"))
		require.NoError(t, err)
		defer resp.Body.Close()
		t0 := time.Now()
		text, err := io.ReadAll(resp.Body)
		assert.Equal(t, "hell", string(text))
		assert.EqualError(t, err, "read tcp example.com:8080: i/o timeout")
		assert.Equal(t, 10*time.Second, time.Since(t0))
		_, again := resp.Body.Read(make([]byte, 1))
		assert.Equal(t, err, again, "a failed body stays failed")
		assert.Equal(t, int64(1), s.Stats().Lost)
	})
}

func TestABodyNoLongerThanTheCutReadsWhole(t *testing.T) {
	s := scenarioOf(t, chaos.Truncate(5))
	resp, err := s.Transport(answer(200, "hello")).RoundTrip(get(t, "http://example.com/"))
	require.NoError(t, err)
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	assert.NoError(t, err)
	assert.Equal(t, "hello", string(text))
	assert.Equal(t, chaos.Stats{Calls: 1, Faults: 1, Processed: 1}, s.Stats(), "nothing was lost")
}

func TestARealFailureOfTheBaseIsReturnedAsItIs(t *testing.T) {
	s := scenarioOf(t, chaos.ResetAfterSend())
	broken := io.ErrClosedPipe
	_, err := s.Transport(roundTripper(func(*http.Request) (*http.Response, error) { return nil, broken })).RoundTrip(get(t, "http://example.com/"))
	assert.Same(t, broken, err)
	assert.Equal(t, int64(0), s.Stats().Processed)
}

func TestSwitchedOffTheWrappersDoNotAllocate(t *testing.T) {
	s := scenarioOf(t, chaos.Refused())
	s.Enable(false)
	op := chaos.Wrap(s, func(context.Context) error { return nil })
	fn := chaos.WrapValue(s, func(context.Context) (int, error) { return 1, nil })
	base := answer(200, "")
	rt := s.Transport(base)
	req := get(t, "http://example.com/")
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = op(ctx); _, _ = fn(ctx) }))
	bare := testing.AllocsPerRun(100, func() { _, _ = base.RoundTrip(req) })
	assert.Equal(t, bare, testing.AllocsPerRun(100, func() { _, _ = rt.RoundTrip(req) }), "the base's own, no more")
}
