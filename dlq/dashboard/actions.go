package dashboard

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/limit"
)

// maxRunning is how many replays may run at once.
const maxRunning = 4

// action reads and checks a form: its anti-forgery token, its action and
// its selection. It answers the request itself when the form is refused.
func (d *Dashboard) action(w http.ResponseWriter, r *http.Request) (string, selection, dlq.Filter, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return "", selection{}, dlq.Filter{}, false
	}
	if !d.validToken(r.PostForm.Get("token"), time.Now()) {
		http.Error(w, "the form has expired or was not made by this dashboard: reload the page", http.StatusForbidden)
		return "", selection{}, dlq.Filter{}, false
	}
	act := r.PostForm.Get("action")
	switch {
	case act == "replay" && d.to == nil:
		http.Error(w, "replay is off: the dashboard has nowhere to send jobs", http.StatusBadRequest)
		return "", selection{}, dlq.Filter{}, false
	case act != "replay" && act != "purge":
		http.Error(w, "unknown action", http.StatusBadRequest)
		return "", selection{}, dlq.Filter{}, false
	}
	sel := selectionOf(r.PostForm)
	f, err := sel.filter()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return "", selection{}, dlq.Filter{}, false
	}
	return act, sel, f, true
}

type confirmPage struct {
	page
	Action  string
	Count   int
	Letters []dlq.Letter
	More    int
	Pace    string
}

// confirm is the dry run: it lists what the action would take, and asks.
func (d *Dashboard) confirm(w http.ResponseWriter, r *http.Request) {
	act, sel, f, ok := d.action(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
	defer cancel()
	p := confirmPage{page: d.page("Confirm: "+act, sel), Action: act, Pace: strconv.FormatFloat(defaultPace, 'g', -1, 64)}
	var err error
	if p.Count, err = d.q.Count(ctx, f); err == nil {
		f.Limit = pageSize
		p.Letters, err = d.q.List(ctx, f)
	}
	if err != nil {
		d.fail(w, err)
		return
	}
	p.More = max(0, p.Count-len(p.Letters))
	d.render(w, http.StatusOK, "confirm", p)
}

type reportPage struct {
	page
	Action string
	Purged int
	Job    *jobView
}

// run does what a confirmation page confirmed: a purge at once, a replay
// in the background, at its pace.
func (d *Dashboard) run(w http.ResponseWriter, r *http.Request) {
	act, sel, f, ok := d.action(w, r)
	if !ok {
		return
	}
	if r.PostForm.Get("confirm") != "yes" {
		http.Error(w, "not confirmed", http.StatusBadRequest)
		return
	}
	if act == "purge" {
		n, err := d.q.Purge(r.Context(), f)
		if err != nil {
			d.fail(w, err)
			return
		}
		d.render(w, http.StatusOK, "report", reportPage{page: d.page("Purged", sel), Action: act, Purged: n})
		return
	}
	pace, err := strconv.ParseFloat(r.PostForm.Get("pace"), 64)
	if err != nil || !(pace > 0 && pace <= maxPace) {
		http.Error(w, fmt.Sprintf("the pace must be a number of letters a second in (0, %g]", maxPace), http.StatusBadRequest)
		return
	}
	id, err := d.start(sel, f, pace)
	if err != nil {
		http.Error(w, err.Error(), http.StatusTooManyRequests)
		return
	}
	// Relative to the page, not to r.URL.Path, which a mount's StripPrefix
	// has cut (http.Redirect would make it absolute from there).
	w.Header().Set("Location", "job?id="+id)
	w.WriteHeader(http.StatusSeeOther)
}

// job is a replay running in the background, or finished.
type job struct {
	id      string
	sel     selection
	pace    float64
	started time.Time
	sent    atomic.Int64 // jobs enqueued so far

	mu       sync.Mutex
	finished time.Time
	report   dlq.ReplayReport
	err      error
}

// start starts a replay, unless too many run.
func (d *Dashboard) start(sel selection, f dlq.Filter, pace float64) (string, error) {
	if d.ctx.Err() != nil {
		return "", errors.New("the dashboard is closed")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	running := 0
	for _, j := range d.jobs {
		if j.done().IsZero() {
			running++
		}
	}
	if running >= maxRunning {
		return "", fmt.Errorf("%d replays are running: wait for one to finish", running)
	}
	j := &job{id: newID(), sel: sel, pace: pace, started: time.Now()}
	d.jobs[j.id], d.order = j, append(d.order, j.id)
	d.forget()
	lim, err := limit.NewAdaptive(limit.AdaptiveConfig{MinRate: min(pace, 1)})
	if err != nil {
		return "", err
	}
	to := &paced{to: d.to, lim: lim, every: time.Duration(float64(time.Second) / pace), sent: &j.sent}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		rep, err := dlq.Replay(d.ctx, d.q, f, to)
		j.mu.Lock()
		j.report, j.err, j.finished = rep, err, time.Now()
		j.mu.Unlock()
	}()
	return j.id, nil
}

// forget drops the oldest finished jobs beyond keptJobs. d.mu is held.
func (d *Dashboard) forget() {
	for len(d.order) > keptJobs {
		i := slices.IndexFunc(d.order, func(id string) bool { return !d.jobs[id].done().IsZero() })
		if i < 0 {
			return
		}
		delete(d.jobs, d.order[i])
		d.order = slices.Delete(d.order, i, i+1)
	}
}

func (j *job) done() time.Time {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.finished
}

// paced sends jobs no faster than one every every, and through the
// library's adaptive limiter, which slows the replay further when the
// destination throttles it (an error classified as a 429): a dependency
// just fixed is not flattened by its own backlog.
type paced struct {
	to    dlq.Enqueuer
	lim   *limit.Adaptive
	every time.Duration
	next  time.Time // dlq.Replay enqueues one job at a time
	sent  *atomic.Int64
}

func (p *paced) Enqueue(ctx context.Context, job dlq.Job) error {
	if wait := time.Until(p.next); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		case <-t.C:
		}
	}
	p.next = time.Now().Add(p.every)
	if !p.lim.Acquire(ctx, time.Minute) {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		return errors.New("dashboard: the destination throttles: its turn would come after a minute")
	}
	err := p.to.Enqueue(ctx, job)
	p.lim.Record(ctx, limit.OutcomeOf(err, classify.Default(err)))
	if err == nil {
		p.sent.Add(1)
	}
	return err
}

// jobView is a replay as its page shows it.
type jobView struct {
	ID, Pace, Started, Finished string
	Sent                        int64
	Running                     bool
	Replayed, Skipped, Lapsed   []string
	Failed                      []count // Value: id, Link: the error
	Err                         string
}

func (d *Dashboard) job(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	j := d.jobs[r.URL.Query().Get("id")]
	d.mu.Unlock()
	if j == nil {
		p := d.page("Replay", selection{})
		p.Error = "no such replay: it finished long ago, or the dashboard restarted"
		d.render(w, http.StatusNotFound, "error", p)
		return
	}
	v := &jobView{ID: j.id, Pace: strconv.FormatFloat(j.pace, 'g', -1, 64), Started: j.started.UTC().Format(time.RFC3339), Sent: j.sent.Load()}
	j.mu.Lock()
	v.Running = j.finished.IsZero()
	if !v.Running {
		v.Finished = j.finished.UTC().Format(time.RFC3339)
		v.Replayed, v.Skipped, v.Lapsed = j.report.Replayed, j.report.Skipped, j.report.Lapsed
		for _, id := range slices.Sorted(maps.Keys(j.report.Failed)) {
			v.Failed = append(v.Failed, count{Value: id, Link: j.report.Failed[id].Error()})
		}
		if j.err != nil && len(v.Failed)+len(v.Lapsed) == 0 {
			v.Err = j.err.Error()
		}
	}
	j.mu.Unlock()
	p := reportPage{page: d.page("Replay", j.sel), Action: "replay", Job: v}
	p.Refresh = v.Running
	d.render(w, http.StatusOK, "report", p)
}
