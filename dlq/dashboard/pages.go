package dashboard

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/retrykit/retry/dlq"
)

// selection is what a page or a form selects: one letter, a group, or the
// letters some filters select. Its fields are the query's parameters.
type selection struct {
	Letter, Group, Source, Stop, Class, Since, Until string
}

// selectionOf reads a selection from a request's query or form.
func selectionOf(v url.Values) selection {
	return selection{Letter: v.Get("letter"), Group: v.Get("group"), Source: v.Get("source"), Stop: v.Get("stop"),
		Class: v.Get("class"), Since: v.Get("since"), Until: v.Get("until")}
}

// filter turns the selection into a dlq.Filter.
func (s selection) filter() (dlq.Filter, error) {
	f := dlq.Filter{Group: s.Group, Source: s.Source, StopReason: s.Stop, Class: s.Class}
	if s.Letter != "" {
		f.IDs = []string{s.Letter}
	}
	var err error
	if f.Since, err = parseTime("since", s.Since); err != nil {
		return f, err
	}
	f.Until, err = parseTime("until", s.Until)
	return f, err
}

// parseTime reads a time from a form: RFC 3339, or a browser's
// datetime-local input (taken as UTC).
func parseTime(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%s %q: want an RFC 3339 time, or YYYY-MM-DDTHH:MM (UTC)", name, v)
}

// query returns the selection as a query string, with extra parameters.
func (s selection) query(extra ...string) string {
	v := url.Values{}
	for k, val := range map[string]string{"letter": s.Letter, "group": s.Group, "source": s.Source, "stop": s.Stop,
		"class": s.Class, "since": s.Since, "until": s.Until} {
		if val != "" {
			v.Set(k, val)
		}
	}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	return v.Encode()
}

// with returns the selection with one filter changed, for a link.
func (s selection) with(key, value string) selection {
	switch key {
	case "source":
		s.Source = value
	case "stop":
		s.Stop = value
	case "class":
		s.Class = value
	}
	return s
}

// Filtered reports whether the selection narrows the queue.
func (s selection) Filtered() bool { return s != selection{} }

// page is what every page's template reads.
type page struct {
	Title     string
	Token     string // the anti-forgery token of the page's forms
	CanReplay bool
	Sel       selection
	Error     string
	Refresh   bool // the page reloads itself each second (a replay running)
}

func (d *Dashboard) page(title string, sel selection) page {
	return page{Title: title, Token: d.formToken(time.Now()), CanReplay: d.to != nil, Sel: sel}
}

// count is one line of a breakdown: a value, its count and a link that
// filters by it.
type count struct {
	Value string
	N     int
	Link  string
}

func breakdown(m map[string]int, sel selection, key string) []count {
	out := make([]count, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, count{Value: k, N: m[k], Link: "./?" + sel.with(key, k).query()})
	}
	slices.SortStableFunc(out, func(a, b count) int { return cmp.Compare(b.N, a.N) })
	return out
}

// pager links the pages of a long list.
type pager struct {
	Page, Pages          int
	Prev, Next           string // links; "" at either end
	FirstItem, LastItem  int
	Total                int
	showingAll, anyItems bool
}

func newPager(base string, sel selection, pageNo, total int, extra ...string) pager {
	pages := max(1, (total+pageSize-1)/pageSize)
	p := pager{Page: pageNo, Pages: pages, Total: total, FirstItem: (pageNo-1)*pageSize + 1, LastItem: min(pageNo*pageSize, total)}
	if pageNo > 1 {
		p.Prev = base + "?" + sel.query(append(extra, "page", strconv.Itoa(pageNo-1))...)
	}
	if pageNo < pages {
		p.Next = base + "?" + sel.query(append(extra, "page", strconv.Itoa(pageNo+1))...)
	}
	return p
}

func pageOf(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || n < 1 {
		return 1
	}
	return min(n, 1_000_000)
}

// groupView is a root cause as the overview shows it.
type groupView struct {
	dlq.Group
	Link, ExampleError string
	Bars               []bar
}

// bar is one slice of a group's histogram, drawn in SVG (attributes, not
// inline style, which the Content-Security-Policy forbids).
type bar struct{ X, Y, H, N int }

const histogramHeight = 24

func bars(h []int) []bar {
	top := 1
	for _, n := range h {
		top = max(top, n)
	}
	out := make([]bar, len(h))
	for i, n := range h {
		height := n * histogramHeight / top
		if n > 0 {
			height = max(height, 1)
		}
		out[i] = bar{X: i * 5, Y: histogramHeight - height, H: height, N: n}
	}
	return out
}

type overviewPage struct {
	page
	Count, Total, Growth      int
	Window                    string
	Alerts                    []string
	Oldest, Newest            time.Time
	BySource, ByStop, ByClass []count
	Groups                    []groupView
	Pager                     pager
}

func (d *Dashboard) overview(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
	defer cancel()
	sel := selectionOf(r.URL.Query())
	p := overviewPage{page: d.page("Dead letters", sel)}
	f, err := sel.filter()
	if err != nil {
		p.Error = err.Error()
		d.render(w, http.StatusBadRequest, "overview", p)
		return
	}
	s, err := dlq.Summarize(ctx, d.q, f)
	if p.Total = s.Count; err == nil {
		err = d.alertState(ctx, &p, sel.Filtered())
	}
	if err != nil {
		d.fail(w, err)
		return
	}
	p.Count, p.Oldest, p.Newest = s.Count, s.Oldest, s.Newest
	p.BySource, p.ByStop, p.ByClass = breakdown(s.BySource, sel, "source"), breakdown(s.ByStopReason, sel, "stop"), breakdown(s.ByClass, sel, "class")
	n := pageOf(r)
	p.Pager = newPager("./", sel, n, len(s.Groups))
	for _, g := range s.Groups[min((n-1)*pageSize, len(s.Groups)):min(n*pageSize, len(s.Groups))] {
		gsel := sel
		gsel.Group = g.ID
		p.Groups = append(p.Groups, groupView{Group: g, Link: "group?" + gsel.query(), ExampleError: g.Example.Last.Error, Bars: bars(g.Histogram)})
	}
	d.render(w, http.StatusOK, "overview", p)
}

// alertState counts the whole queue (the summary's count, unless
// filtered) and its growth, and says which
// thresholds it is above, as a Monitor would alert.
func (d *Dashboard) alertState(ctx context.Context, p *overviewPage, filtered bool) error {
	t := d.c.thresholds
	window := cmp.Or(t.Window, defaultWindow)
	var err error
	if filtered {
		if p.Total, err = d.q.Count(ctx, dlq.Filter{}); err != nil {
			return err
		}
	}
	if p.Growth, err = d.q.Count(ctx, dlq.Filter{Since: time.Now().Add(-window)}); err != nil {
		return err
	}
	p.Window = window.String()
	if size := cmp.Or(t.Size, 10); size != dlq.Off && p.Total > size {
		p.Alerts = append(p.Alerts, fmt.Sprintf("size: %d letters (more than %d)", p.Total, size))
	}
	if growth := cmp.Or(t.Growth, 10); growth != dlq.Off && p.Growth > growth {
		p.Alerts = append(p.Alerts, fmt.Sprintf("growth: %d new letters within %v (more than %d)", p.Growth, window, growth))
	}
	return nil
}

type groupPage struct {
	page
	ID, Signature, Class, ExampleError string
	Count                              int
	Letters                            []dlq.Letter
	Pager                              pager
	Back                               string
}

func (d *Dashboard) group(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
	defer cancel()
	sel := selectionOf(r.URL.Query())
	sel.Letter = ""
	p := groupPage{page: d.page("Root cause "+sel.Group, sel), ID: sel.Group}
	back := sel
	back.Group = ""
	p.Back = "./?" + back.query()
	f, err := sel.filter()
	if err != nil || sel.Group == "" {
		p.Error = "a group is required"
		if err != nil {
			p.Error = err.Error()
		}
		d.render(w, http.StatusBadRequest, "group", p)
		return
	}
	if p.Count, err = d.q.Count(ctx, f); err != nil {
		d.fail(w, err)
		return
	}
	n := pageOf(r)
	f.Offset, f.Limit = (n-1)*pageSize, pageSize
	if p.Letters, err = d.q.List(ctx, f); err != nil {
		d.fail(w, err)
		return
	}
	if len(p.Letters) > 0 {
		ex := p.Letters[0]
		p.Signature, p.Class, p.ExampleError = ex.Signature(), ex.Last.Decision.Reason, ex.Last.Error
	}
	p.Pager = newPager("group", sel, n, p.Count)
	d.render(w, http.StatusOK, "group", p)
}

type letterPage struct {
	page
	L                dlq.Letter
	Metadata         []count // Value: key=value
	Payload          string
	PayloadNote      string
	GroupLink        string
	Attempts         []attempt
	RetryAfterString string
}

// attempt is one failure as the letter's page shows it, with its time:
// its own, or for a letter stored without it, the first attempt's and the
// last's.
type attempt struct {
	dlq.Failure
	At string
}

func (d *Dashboard) letter(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
	defer cancel()
	id := r.URL.Query().Get("id")
	p := letterPage{page: d.page("Letter "+id, selection{Letter: id})}
	if id == "" {
		p.Error = "a letter id is required"
		d.render(w, http.StatusBadRequest, "letter", p)
		return
	}
	l, err := d.q.Get(ctx, id)
	if errors.Is(err, dlq.ErrNotFound) {
		p.Error = "no letter " + id + ": it was replayed or purged"
		d.render(w, http.StatusNotFound, "letter", p)
		return
	}
	if err != nil {
		d.fail(w, err)
		return
	}
	p.L, p.GroupLink = l, "group?"+selection{Group: l.Group()}.query()
	for _, k := range slices.Sorted(maps.Keys(l.Job.Metadata)) {
		p.Metadata = append(p.Metadata, count{Value: k + " = " + l.Job.Metadata[k]})
	}
	p.Payload, p.PayloadNote = showPayload(l.Job.Payload)
	for i, f := range l.Failures {
		a := attempt{Failure: f}
		switch {
		case !f.At.IsZero():
			a.At = f.At.UTC().Format(time.RFC3339Nano)
		case i == 0:
			a.At = l.FirstFailure.Format(time.RFC3339Nano)
		case i == len(l.Failures)-1:
			a.At = l.LastFailure.Format(time.RFC3339Nano)
		}
		p.Attempts = append(p.Attempts, a)
	}
	d.render(w, http.StatusOK, "letter", p)
}

// showPayload returns a payload as a page shows it: JSON indented, other
// text as it is, anything else as a hex dump; at most maxPayloadShow bytes.
func showPayload(b []byte) (text, note string) {
	note = fmt.Sprintf("%d bytes", len(b))
	switch {
	case len(b) == 0:
		return "", "empty"
	case len(b) <= 4*maxPayloadShow && json.Valid(b):
		var out bytes.Buffer
		if json.Indent(&out, b, "", "  ") == nil {
			b, note = out.Bytes(), note+", JSON"
		}
	case !utf8.Valid(b):
		b, note = []byte(hex.Dump(b[:min(len(b), maxPayloadShow/4)])), note+", binary"
	}
	if len(b) > maxPayloadShow {
		cut := maxPayloadShow
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		b, note = b[:cut], note+fmt.Sprintf(", the first %d shown", cut)
	}
	return string(b), note
}

// fail answers a request whose queue failed.
func (d *Dashboard) fail(w http.ResponseWriter, err error) {
	p := d.page("Error", selection{})
	p.Error = "the queue failed: " + err.Error()
	d.render(w, http.StatusInternalServerError, "error", p)
}

// What names what the page's actions take.
func (p page) What() string {
	switch {
	case p.Sel.Letter != "":
		return "this letter"
	case p.Sel.Group != "":
		return "this group"
	case p.Sel.Filtered():
		return "these letters"
	}
	return "every letter"
}
