package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/dashboard"
)

// serveLocal answers one request without a network, for fake time.
func serveLocal(h http.Handler, method, path string, form url.Values) *httptest.ResponseRecorder {
	var r *http.Request
	if form != nil {
		r = httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		r = httptest.NewRequest(method, path, nil)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// startReplay replays every letter of q at pace through the dashboard's
// forms, and returns the path of its report.
func startReplay(t *testing.T, d http.Handler, pace string) string {
	t.Helper()
	tok := token(t, page{body: serveLocal(d, http.MethodGet, "/", nil).Body.String()})
	w := serveLocal(d, http.MethodPost, "/run", url.Values{"token": {tok}, "action": {"replay"}, "confirm": {"yes"}, "pace": {pace}})
	if w.Code != http.StatusSeeOther {
		t.Fatalf("run: %d %s", w.Code, w.Body)
	}
	if loc := w.Header().Get("Location"); strings.HasPrefix(loc, "job?id=") {
		return "/" + loc
	}
	t.Fatalf("run redirected to %q; want the job's page, relative", w.Header().Get("Location"))
	return ""
}

func TestAReplayKeepsItsPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ls []dlq.Letter
		for i := range 10 {
			ls = append(ls, letter(t, "llm", fmt.Sprint(i), t0, errors.New("timeout"), "x"))
		}
		q, to := queue(t, ls...), &recorder{}
		d, err := dashboard.New(q, to)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		job := startReplay(t, d, "2") // 10 letters at 2 a second: 4.5 s
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if n := len(to.taken()); n < 4 || n > 5 {
			t.Fatalf("after 2s at 2 letters a second, %d replayed", n)
		}
		if body := serveLocal(d, http.MethodGet, job, nil).Body.String(); !strings.Contains(body, "Replaying…") || !strings.Contains(body, `http-equiv="refresh"`) {
			t.Fatalf("the report of a running replay:\n%s", body)
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if n := len(to.taken()); n != 10 {
			t.Fatalf("after 5s, %d replayed; want all 10", n)
		}
		if body := serveLocal(d, http.MethodGet, job, nil).Body.String(); !strings.Contains(body, "Replayed 10 letters") {
			t.Fatalf("the report of a finished replay:\n%s", body)
		}
	})
}

// throttling is an Enqueuer whose destination answers 429 to its first
// calls, as a dependency just back up might.
type throttling struct {
	recorder
	refusals int
}

func (e *throttling) Enqueue(ctx context.Context, j dlq.Job) error {
	if e.refusals > 0 {
		e.refusals--
		return &classify.StatusError{Code: http.StatusTooManyRequests}
	}
	return e.recorder.Enqueue(ctx, j)
}

func TestAReplayThatIsThrottledReportsWhatStayed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ls []dlq.Letter
		for i := range 6 {
			ls = append(ls, letter(t, "llm", fmt.Sprint(i), t0, errors.New("timeout"), "x"))
		}
		q, to := queue(t, ls...), &throttling{refusals: 2}
		d, err := dashboard.New(q, to)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		job := startReplay(t, d, "100")
		time.Sleep(time.Minute)
		synctest.Wait()
		body := serveLocal(d, http.MethodGet, job, nil).Body.String()
		if !strings.Contains(body, "Replayed 4 letters") || !strings.Contains(body, `<dd id="failed">2 (kept in the queue)</dd>`) || !strings.Contains(body, "http 429") {
			t.Fatalf("the report of a throttled replay:\n%s", body)
		}
		if n := count(t, q, dlq.Filter{}); n != 2 {
			t.Fatalf("%d letters left; want the 2 throttled", n)
		}
	})
}

func TestClosingTheDashboardStopsItsReplays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ls []dlq.Letter
		for i := range 10 {
			ls = append(ls, letter(t, "llm", fmt.Sprint(i), t0, errors.New("timeout"), "x"))
		}
		q, to := queue(t, ls...), &recorder{}
		d, err := dashboard.New(q, to)
		if err != nil {
			t.Fatal(err)
		}
		startReplay(t, d, "1")
		time.Sleep(1500 * time.Millisecond)
		d.Close()
		if n := len(to.taken()); n != 2 {
			t.Fatalf("%d replayed before Close; want 2 (at 0s and 1s)", n)
		}
		if n := count(t, q, dlq.Filter{}); n != 8 {
			t.Fatalf("%d letters left after Close; want 8", n)
		}
	})
}
