package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/dashboard"
	"github.com/retrykit/retry/policy"
)

var t0 = time.Now().Add(-30 * time.Minute).UTC().Truncate(time.Second)

// letter is the letter of job id of source, dead at at after three
// attempts that failed with err.
func letter(t *testing.T, source, id string, at time.Time, err error, payload string) dlq.Letter {
	t.Helper()
	d := classify.Default(err)
	if d.Verdict == classify.NoOpinion {
		d = classify.Decision{Verdict: classify.Retry, Reason: classify.ReasonUnclassified}
	}
	rerr := &retry.Error{Stats: retry.Stats{Attempts: 3, Waited: 30 * time.Millisecond, Elapsed: 40 * time.Millisecond},
		Stop: policy.StopAttempts, Reason: retry.ErrExhausted, Last: err, Decision: d,
		Failures: []retry.Failure{{Attempt: 1, Err: err, Decision: d, Delay: 10 * time.Millisecond},
			{Attempt: 2, Err: err, Decision: d, Delay: 20 * time.Millisecond}, {Attempt: 3, Err: err, Decision: d}}}
	l, ok := dlq.NewLetter(dlq.Job{ID: id, Source: source, Payload: []byte(payload), Metadata: map[string]string{"tenant": "acme"}}, rerr, at)
	if !ok {
		t.Fatal("NewLetter refused the letter")
	}
	return l
}

func queue(t *testing.T, ls ...dlq.Letter) dlq.Queue {
	t.Helper()
	q, err := dlq.NewMemory(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if _, err := q.Put(context.Background(), l); err != nil {
			t.Fatal(err)
		}
	}
	return q
}

// seeded is a queue of 3 timeouts of llm and a 401 of email.
func seeded(t *testing.T) (dlq.Queue, []dlq.Letter) {
	t.Helper()
	ls := []dlq.Letter{
		letter(t, "llm", "a", t0, errors.New("timeout after 3012ms on 10.0.0.7"), `{"prompt":"hi","n":1}`),
		letter(t, "llm", "b", t0.Add(time.Minute), errors.New("timeout after 998ms on 10.0.0.9"), "b"),
		letter(t, "llm", "c", t0.Add(2*time.Minute), errors.New("timeout after 5ms on 10.0.0.1"), "c"),
		letter(t, "email", "d", t0.Add(3*time.Minute), &classify.StatusError{Code: http.StatusUnauthorized}, "d"),
	}
	return queue(t, ls...), ls
}

// recorder is an Enqueuer that remembers the jobs it took.
type recorder struct {
	mu   sync.Mutex
	jobs []string
}

func (r *recorder) Enqueue(_ context.Context, j dlq.Job) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobs = append(r.jobs, j.ID)
	return nil
}

func (r *recorder) taken() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.jobs...)
}

const prefix = "/admin/dlq"

func serve(t *testing.T, q dlq.Queue, to dlq.Enqueuer, opts ...dashboard.Option) *httptest.Server {
	t.Helper()
	d, err := dashboard.New(q, to, opts...)
	if err != nil {
		t.Fatal(err)
	}
	// Mounted under a prefix, as a user mounts it in an admin server: every
	// link and redirect must be relative.
	mux := http.NewServeMux()
	mux.Handle(prefix+"/", http.StripPrefix(prefix, d))
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.Close()
		d.Close()
	})
	srv.URL += prefix
	return srv
}

type page struct {
	status int
	body   string
	header http.Header
	url    *url.URL
}

func do(t *testing.T, req *http.Request) page {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{resp.StatusCode, string(b), resp.Header, resp.Request.URL}
}

func get(t *testing.T, srv *httptest.Server, path string) page {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	return do(t, req)
}

func post(t *testing.T, srv *httptest.Server, path string, form url.Values, header ...string) page {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://"+srv.Listener.Addr().String())
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(t, req)
}

var tokenField = regexp.MustCompile(`name="token" value="([^"]+)"`)

// token reads the anti-forgery token of a page's forms.
func token(t *testing.T, p page) string {
	t.Helper()
	m := tokenField.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("the page has no form token:\n%s", p.body)
	}
	return m[1]
}

func must(t *testing.T, p page, status int, wants ...string) page {
	t.Helper()
	if p.status != status {
		t.Fatalf("status %d, want %d:\n%s", p.status, status, p.body)
	}
	for _, w := range wants {
		if !strings.Contains(p.body, w) {
			t.Errorf("the page lacks %q:\n%s", w, p.body)
		}
	}
	return p
}

func count(t *testing.T, q dlq.Queue, f dlq.Filter) int {
	t.Helper()
	n, err := q.Count(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestTheOverviewShowsCountsCausesAndBreakdowns(t *testing.T) {
	q, ls := seeded(t)
	srv := serve(t, q, &recorder{})
	p := must(t, get(t, srv, "/"), http.StatusOK,
		`<span class="n" id="count">4</span>`, `<span class="n" id="growth">4</span>`, "No alert",
		"group?group="+ls[0].Group(), `<td class="n">3</td><td>unclassified</td>`, "timeout after 5ms on 10.0.0.1",
		`<a href="./?source=llm">llm</a> <span class="n">3</span>`, `<a href="./?stop=max-attempts">max-attempts</a>`,
		`<rect x="0" y="0" width="4" height="24">`)
	if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe-inline") {
		t.Fatalf("Content-Security-Policy = %q; want default-src 'none' and no inline script", csp)
	}
	if !strings.Contains(p.body, `<form method="post" action="confirm">`) || strings.Contains(p.body, "<script") {
		t.Fatalf("the overview's actions are not POST forms, or it has a script:\n%s", p.body)
	}
}

func TestTheAlertStateFollowsTheThresholds(t *testing.T) {
	q, _ := seeded(t)
	srv := serve(t, q, nil, dashboard.WithThresholds(dlq.Thresholds{Size: 3, Growth: dlq.Off}))
	must(t, get(t, srv, "/"), http.StatusOK, "Alerting — size: 4 letters (more than 3)")
}

func TestFiltersNarrowTheOverview(t *testing.T) {
	q, _ := seeded(t)
	srv := serve(t, q, nil)
	must(t, get(t, srv, "/?source=email"), http.StatusOK, `<span class="n" id="count">1</span> letters selected, of <span id="total">4</span>`, "http 4xx")
	must(t, get(t, srv, "/?class=unclassified&until="+url.QueryEscape(t0.Add(90*time.Second).Format(time.RFC3339))), http.StatusOK, `id="count">2<`)
	must(t, get(t, srv, "/?since="+t0.Add(2*time.Minute).Format("2006-01-02T15:04")), http.StatusOK, `id="count">2<`)
	must(t, get(t, srv, "/?since=yesterday"), http.StatusBadRequest, "since &#34;yesterday&#34;")
}

func TestAGroupsPageListsItsLettersAPageAtATime(t *testing.T) {
	var ls []dlq.Letter
	for i := range 120 {
		ls = append(ls, letter(t, "llm", fmt.Sprintf("job-%03d", i), t0.Add(time.Duration(i)*time.Second), errors.New("timeout after 5ms"), "x"))
	}
	srv := serve(t, queue(t, ls...), nil)
	g := ls[0].Group()
	p := must(t, get(t, srv, "/group?group="+g), http.StatusOK, `<dd id="count">120</dd>`, "page 1 of 3", "job-049", `rel="next"`)
	if strings.Contains(p.body, "job-050") {
		t.Fatal("the first page shows more than 50 letters")
	}
	p = must(t, get(t, srv, "/group?group="+g+"&page=3"), http.StatusOK, "job-100", "job-119", "page 3 of 3")
	if strings.Contains(p.body, "job-099") || strings.Contains(p.body, `rel="next"`) {
		t.Fatal("the last page shows letters of the page before, or a next page")
	}
	must(t, get(t, srv, "/group"), http.StatusBadRequest, "a group is required")
}

func TestALettersPageShowsEverything(t *testing.T) {
	q, ls := seeded(t)
	srv := serve(t, q, nil)
	must(t, get(t, srv, "/letter?id="+ls[0].ID), http.StatusOK, "{\n  &#34;prompt&#34;: &#34;hi&#34;,\n  &#34;n&#34;: 1\n}",
		"21 bytes, JSON", "tenant = acme", "<td>10ms</td>", "<td>20ms</td>", "max-attempts", t0.Format(time.RFC3339Nano))
	must(t, get(t, srv, "/letter?id=0000000000000000"), http.StatusNotFound, "it was replayed or purged")
	big := letter(t, "llm", "big", t0, errors.New("boom"), strings.Repeat("é", 100<<10))
	srv = serve(t, queue(t, big), nil)
	p := must(t, get(t, srv, "/letter?id="+big.ID), http.StatusOK, "204800 bytes, the first 65536 shown")
	if len(p.body) > 80<<10 {
		t.Fatalf("the page of a 200 KiB payload is %d bytes", len(p.body))
	}
}

// poison is what a hostile producer puts in every field it controls.
const poison = `<script>document.title="owned"</script><img src=x onerror=alert(1)>`

func TestEveryFieldAProducerControlsIsEscaped(t *testing.T) {
	l := letter(t, "src"+poison, "job"+poison, t0, errors.New("boom"+poison), "payload"+poison)
	l2, _ := dlq.NewLetter(dlq.Job{ID: "m", Source: "s", Metadata: map[string]string{"k" + poison: "v" + poison}}, errors.New("x"), t0)
	srv := serve(t, queue(t, l, l2), &recorder{})
	for _, path := range []string{"/", "/group?group=" + l.Group(), "/letter?id=" + l.ID, "/letter?id=" + l2.ID} {
		p := must(t, get(t, srv, path), http.StatusOK)
		if strings.Contains(p.body, "<script") || strings.Contains(p.body, "<img") {
			t.Fatalf("%s carries the producer's markup:\n%s", path, p.body)
		}
	}
	must(t, get(t, srv, "/letter?id="+l.ID), http.StatusOK, "&lt;script&gt;document.title=&#34;owned&#34;&lt;/script&gt;")
	p := post(t, srv, "/confirm", url.Values{"token": {token(t, get(t, srv, "/"))}, "action": {"replay"}, "letter": {l.ID}})
	if must(t, p, http.StatusOK); strings.Contains(p.body, "<script") {
		t.Fatalf("the confirmation carries the producer's markup:\n%s", p.body)
	}
}

func TestNoGetChangesAnything(t *testing.T) {
	q, ls := seeded(t)
	to := &recorder{}
	srv := serve(t, q, to)
	for _, path := range []string{"/run?action=purge&confirm=yes", "/confirm?action=replay", "/run?action=replay&confirm=yes&pace=10&group=" + ls[0].Group()} {
		if p := get(t, srv, path); p.status != http.StatusMethodNotAllowed {
			t.Fatalf("GET %s: status %d, want 405", path, p.status)
		}
	}
	if n := count(t, q, dlq.Filter{}); n != 4 || len(to.taken()) != 0 {
		t.Fatalf("after GETs: %d letters, %v replayed; want 4 and none", n, to.taken())
	}
}

func TestAFormIsRefusedWithoutItsTokenOrFromAnotherOrigin(t *testing.T) {
	q, _ := seeded(t)
	srv := serve(t, q, &recorder{})
	tok := token(t, get(t, srv, "/"))
	purge := func(tok string) url.Values {
		return url.Values{"token": {tok}, "action": {"purge"}, "confirm": {"yes"}}
	}
	for name, p := range map[string]page{
		"no token":          post(t, srv, "/run", purge("")),
		"a forged token":    post(t, srv, "/run", purge(strings.Replace(tok, ".", "9.", 1))),
		"an expired token":  post(t, srv, "/run", purge("1000000000."+strings.SplitN(tok, ".", 2)[1])),
		"a cross-site post": post(t, srv, "/run", purge(tok), "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"),
		"another origin":    post(t, srv, "/run", purge(tok), "Sec-Fetch-Site", "", "Origin", "https://evil.example"),
	} {
		if p.status != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", name, p.status)
		}
	}
	if n := count(t, q, dlq.Filter{}); n != 4 {
		t.Fatalf("%d letters left; want all 4", n)
	}
	must(t, post(t, srv, "/run", url.Values{"token": {tok}, "action": {"purge"}}), http.StatusBadRequest, "not confirmed")
}

func TestAReplayGoesThroughADryRunAndReportsWhatItDid(t *testing.T) {
	q, ls := seeded(t)
	to := &recorder{}
	srv := serve(t, q, to)
	g := ls[0].Group()
	tok := token(t, get(t, srv, "/group?group="+g))
	p := must(t, post(t, srv, "/confirm", url.Values{"token": {tok}, "action": {"replay"}, "group": {g}}), http.StatusOK,
		"Replay 3 letters?", "Dry run: these 3 letters would be replayed", ls[2].ID, `name="pace" id="pace" value="10"`)
	if n := count(t, q, dlq.Filter{}); n != 4 || len(to.taken()) != 0 {
		t.Fatalf("the dry run changed the queue: %d letters, %v replayed", n, to.taken())
	}
	form := url.Values{"token": {token(t, p)}, "action": {"replay"}, "confirm": {"yes"}, "group": {g}, "pace": {"1000"}}
	p = must(t, post(t, srv, "/run", form), http.StatusOK)
	if p.url.Path != prefix+"/job" {
		t.Fatalf("the replay went to %s, not its job's page", p.url)
	}
	deadline := time.Now().Add(10 * time.Second)
	for strings.Contains(p.body, "Replaying") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		p = get(t, srv, strings.TrimPrefix(p.url.RequestURI(), prefix))
	}
	must(t, p, http.StatusOK, "Replayed 3 letters", `<dd id="replayed">3</dd>`, `<dd id="failed">0 (kept in the queue)</dd>`)
	if n := count(t, q, dlq.Filter{}); n != 1 || len(to.taken()) != 3 {
		t.Fatalf("after the replay: %d letters, %v replayed; want 1 left and a, b, c", n, to.taken())
	}
	must(t, post(t, srv, "/run", url.Values{"token": {tok}, "action": {"replay"}, "confirm": {"yes"}, "pace": {"0"}}), http.StatusBadRequest, "the pace must be")
}

func TestAPurgeOfTheFilteredLettersReportsHowMany(t *testing.T) {
	q, _ := seeded(t)
	srv := serve(t, q, nil)
	p := must(t, get(t, srv, "/?source=llm"), http.StatusOK)
	if strings.Contains(p.body, `id="replay"`) {
		t.Fatal("a dashboard with no Enqueuer offers replay")
	}
	form := url.Values{"token": {token(t, p)}, "action": {"purge"}, "source": {"llm"}}
	must(t, post(t, srv, "/confirm", form), http.StatusOK, "Purge 3 letters?", "would be removed for good")
	form.Set("confirm", "yes")
	must(t, post(t, srv, "/run", form), http.StatusOK, "Purged 3 letters")
	if n := count(t, q, dlq.Filter{}); n != 1 {
		t.Fatalf("%d letters left; want the email one", n)
	}
	form.Set("action", "replay")
	must(t, post(t, srv, "/confirm", form), http.StatusBadRequest, "replay is off")
}

func TestATokenIsRequiredWhenSet(t *testing.T) {
	q, _ := seeded(t)
	const secret = "0123456789abcdef-secret"
	srv := serve(t, q, nil, dashboard.WithToken(secret))
	if p := get(t, srv, "/"); p.status != http.StatusUnauthorized || !strings.Contains(p.header.Get("WWW-Authenticate"), "Basic") {
		t.Fatalf("no token: status %d, WWW-Authenticate %q", p.status, p.header.Get("WWW-Authenticate"))
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	must(t, do(t, req), http.StatusOK)
	req, _ = http.NewRequest(http.MethodGet, srv.URL+"/style.css", nil)
	req.SetBasicAuth("anyone", secret)
	must(t, do(t, req), http.StatusOK, ".histogram")
	req.SetBasicAuth("anyone", secret+"x")
	if p := do(t, req); p.status != http.StatusUnauthorized {
		t.Fatalf("a wrong token: status %d", p.status)
	}
}

func TestBadArgumentsAreRefused(t *testing.T) {
	q, _ := seeded(t)
	for name, f := range map[string]func() error{
		"a nil queue":   func() error { _, err := dashboard.New(nil, nil); return err },
		"a nil option":  func() error { _, err := dashboard.New(q, nil, nil); return err },
		"a short token": func() error { _, err := dashboard.New(q, nil, dashboard.WithToken("short")); return err },
		"a bad threshold": func() error {
			_, err := dashboard.New(q, nil, dashboard.WithThresholds(dlq.Thresholds{Size: -2}))
			return err
		},
		"a too short span": func() error {
			_, err := dashboard.New(q, nil, dashboard.WithThresholds(dlq.Thresholds{Window: time.Millisecond}))
			return err
		},
	} {
		if err := f(); !errors.Is(err, retry.ErrInvalid) {
			t.Errorf("%s: %v; want a *retry.InvalidError", name, err)
		}
	}
	var zero *dashboard.Dashboard
	w := httptest.NewRecorder()
	zero.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	if w.Code != http.StatusInternalServerError || zero.Close() != nil {
		t.Fatalf("a nil Dashboard answered %d", w.Code)
	}
}
