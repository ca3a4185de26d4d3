package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/sqlite"
	"github.com/retrykit/retry/policy"
)

// browser returns a context of a new headless Chromium, with a profile of
// its own and no network of its own (no updates, sync or QUIC). Without
// Chromium the test is skipped, unless RETRY_REQUIRE_BROWSER=1.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("RETRY_REQUIRE_BROWSER") == "1" {
			t.Fatalf("RETRY_REQUIRE_BROWSER=1 and no chromium: %v (Debian: apt-get install chromium)", err)
		}
		t.Skipf("no chromium (%v): install Debian's chromium to run the browser tests", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browser, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(browser); err != nil { // starts it, for as long as browser lasts
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancelTimeout := context.WithTimeout(browser, 2*time.Minute) // bounds every step
	t.Cleanup(cancelTimeout)
	return ctx
}

// poisonedError is an error text that would run script if a page put it
// in its markup.
const poisonedError = `upstream said <script>document.title="owned";window.owned=1</script><img src=x onerror="window.owned=2">`

// dashboardFile is a queue as a team might find it one morning: 3 timeouts
// of llm-jobs in the last hour (the cause just fixed), 12 rate limits over
// the night, 6 expired credentials of emails, 8 refused connections of
// webhooks, and one letter whose error carries a script.
func dashboardFile(t *testing.T) (string, map[string]dlq.Letter) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dlq.db")
	q, err := sqlite.Open(context.Background(), path, sqlite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	now := time.Now()
	out := map[string]dlq.Letter{}
	add := func(name, source string, at time.Time, stop policy.Stop, err error) {
		d := decision(err)
		rerr := &retry.Error{Stats: retry.Stats{Attempts: 3, Waited: 1500 * time.Millisecond, Elapsed: 2 * time.Second},
			Stop: stop, Reason: retry.ErrExhausted, Last: err, Decision: d,
			Failures: []retry.Failure{{Attempt: 1, Err: err, Decision: d, Delay: 500 * time.Millisecond, At: at.Add(-2 * time.Second)},
				{Attempt: 2, Err: err, Decision: d, Delay: time.Second}, {Attempt: 3, Err: err, Decision: d}}}
		job := dlq.Job{ID: name, Source: source, Payload: []byte(`{"job":"` + name + `","tenant":"acme","attempt":1}`), Metadata: map[string]string{"tenant": "acme", "trace": "4bf92f3577b34da6"}}
		l, _ := dlq.NewLetter(job, rerr, at)
		if _, err := q.Put(context.Background(), l); err != nil {
			t.Fatal(err)
		}
		out[name] = l
	}
	for i := range 3 {
		add(fmt.Sprintf("summarize-%d", i), "llm-jobs", now.Add(-time.Duration(50-20*i)*time.Minute), policy.StopAttempts,
			fmt.Errorf("timeout after %dms on 10.0.0.%d", 3000+i*17, 7+i))
	}
	for i := range 12 {
		add(fmt.Sprintf("embed-%d", i), "llm-jobs", now.Add(-time.Duration(20*60-i*97)*time.Minute), policy.StopBudget,
			&classify.StatusError{Code: http.StatusTooManyRequests})
	}
	for i := range 6 {
		add(fmt.Sprintf("welcome-%d", i), "emails", now.Add(-time.Duration(15*60-i*130)*time.Minute), policy.StopPermanent,
			&classify.StatusError{Code: http.StatusUnauthorized})
	}
	for i := range 8 {
		add(fmt.Sprintf("hook-%d", i), "webhooks", now.Add(-time.Duration(9*60-i*61)*time.Minute), policy.StopElapsed,
			fmt.Errorf("dial tcp 10.1.2.%d:443: connect: connection refused", i))
	}
	add("poisoned", "webhooks", now.Add(-5*time.Minute), policy.StopAttempts, errors.New(poisonedError))
	return path, out
}

func text(ctx context.Context, sel string) (string, error) {
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	return strings.TrimSpace(s), err
}

// screenshot saves the page in the test's directory, and returns its path.
func screenshot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

func TestABrowserReplaysARootCauseThroughTheConfirmation(t *testing.T) {
	ctx := browser(t)
	db, ls := dashboardFile(t)
	base := startServe(t, nil, "--db", db, "serve", "--exec", "cat >/dev/null")
	fixed := ls["summarize-0"].Group()

	if err := chromedp.Do(ctx, chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS(`table.groups`))); err != nil {
		t.Fatal(err)
	}
	if n, err := text(ctx, "#count"); err != nil || n != "30" {
		t.Fatalf("the overview counts %q (%v); want 30", n, err)
	}
	overview := screenshot(t, ctx, "overview")
	if out := os.Getenv("RETRY_DASHBOARD_SCREENSHOT"); out != "" {
		b, _ := os.ReadFile(overview)
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Follow the group of timeouts, and replay it.
	err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`tr[data-group="`+fixed+`"] a.signature`)),
		chromedp.WaitVisible(chromedp.CSS(`table.letters`)))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := text(ctx, "#count"); err != nil || n != "3" {
		t.Fatalf("the group's page counts %q (%v); want 3", n, err)
	}
	screenshot(t, ctx, "group")
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#replay`)), chromedp.WaitVisible(chromedp.CSS(`#dry-run`)))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := text(ctx, "#dry-run"); err != nil || !strings.Contains(s, "these 3 letters would be replayed") {
		t.Fatalf("the confirmation says %q (%v)", s, err)
	}
	screenshot(t, ctx, "confirm")
	err = chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#pace`), "50"),
		chromedp.Click(chromedp.CSS(`#confirm`)),
		chromedp.WaitVisible(chromedp.CSS(`#replayed`)))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := text(ctx, "#replayed"); err != nil || n != "3" {
		t.Fatalf("the report says %q replayed (%v); want 3", n, err)
	}
	screenshot(t, ctx, "report")

	// Back on the overview, the counts have changed.
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#back`)), chromedp.WaitVisible(chromedp.CSS(`table.groups`)))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := text(ctx, "#count"); err != nil || n != "27" {
		t.Fatalf("after the replay the overview counts %q (%v); want 27", n, err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('tr[data-group="`+fixed+`"]').length`))
	if err != nil || rows != 0 {
		t.Fatalf("the replayed group is still listed (%d rows, %v)", rows, err)
	}
}

func TestAPoisonedLetterShowsAsTextAndNeverRuns(t *testing.T) {
	ctx := browser(t)
	db, ls := dashboardFile(t)
	base := startServe(t, nil, "--db", db, "serve")
	poisoned := ls["poisoned"]
	for _, path := range []string{"", "group?group=" + poisoned.Group(), "letter?id=" + poisoned.ID} {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+path), chromedp.WaitVisible(chromedp.CSS(`main`))); err != nil {
			t.Fatal(err)
		}
		title, err := chromedp.Run(ctx, chromedp.Title())
		if err != nil {
			t.Fatal(err)
		}
		owned, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.owned !== undefined || document.querySelector('main script, main img') !== null`))
		if err != nil {
			t.Fatal(err)
		}
		if owned || strings.Contains(title, "owned") {
			t.Fatalf("/%s ran the letter's script, or holds its markup (title %q)", path, title)
		}
	}
	if s, err := text(ctx, "#last-error"); err != nil || !strings.Contains(s, `<script>document.title="owned";window.owned=1</script>`) {
		t.Fatalf("the letter's error shows as %q (%v); want its text, <script> and all", s, err)
	}
	screenshot(t, ctx, "poisoned")
}
