package dashboard

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/internal/argerr"
)

// Defaults of the dashboard.
const (
	pageSize       = 50               // letters or groups on a page
	formLifetime   = 12 * time.Hour   // how long a page's forms stay valid
	defaultPace    = 10.0             // letters a second a replay sends, unless the form says
	maxPace        = 1000.0           // the fastest pace a form may ask for
	maxPayloadShow = 64 << 10         // bytes of a payload a letter's page shows
	keptJobs       = 20               // finished replays whose reports are kept
	defaultWindow  = time.Hour        // the growth window, when Thresholds.Window is 0
	readTimeout    = 30 * time.Second // the longest a page's queries may take
)

// Option configures New. A bad option — nil, or given a value it refuses —
// makes New return a *retry.InvalidError naming it and its value.
type Option func(*config) *retry.InvalidError

type config struct {
	token      string
	thresholds dlq.Thresholds
}

// WithToken makes every request present token: as a bearer token
// (Authorization: Bearer TOKEN), or as the password of HTTP basic
// authentication, which a browser asks for (any user name). The default
// asks for none: mount the handler behind your own authentication, or on
// a loopback address.
func WithToken(token string) Option {
	return func(c *config) *retry.InvalidError {
		if len(token) < 16 {
			return argerr.New("dashboard.WithToken", "<redacted>", "the token must be at least 16 characters")
		}
		c.token = token
		return nil
	}
}

// WithThresholds sets when the overview shows the queue as alerting, as a
// dlq.Monitor with these thresholds would; the zero value is the default
// (more than 10 letters, or more than 10 new letters within an hour).
func WithThresholds(t dlq.Thresholds) Option {
	return func(c *config) *retry.InvalidError {
		switch {
		case t.Size < dlq.Off:
			return argerr.New("dashboard.WithThresholds", t.Size, "Size must be at least 0, or dlq.Off")
		case t.Growth < dlq.Off:
			return argerr.New("dashboard.WithThresholds", t.Growth, "Growth must be at least 0, or dlq.Off")
		case t.Window < 0 || t.Window > 0 && t.Window < time.Second:
			return argerr.New("dashboard.WithThresholds", t.Window, "Window must be at least 1s (0 means 1h)")
		}
		c.thresholds = t
		return nil
	}
}

// Dashboard is an http.Handler that shows a dead letter queue and replays
// or purges its letters. Make it with New; a nil or zero Dashboard answers
// every request with 500 Internal Server Error. It is safe for concurrent
// use.
type Dashboard struct {
	q      dlq.Queue
	to     dlq.Enqueuer // nil: replay is off
	c      config
	secret []byte // signs the forms' anti-forgery tokens
	csrf   *http.CrossOriginProtection
	mux    *http.ServeMux

	ctx    context.Context // ends when Close is called: the replays stop
	cancel context.CancelFunc
	mu     sync.Mutex
	jobs   map[string]*job
	order  []string // job ids, oldest first
	wg     sync.WaitGroup
}

// New returns a dashboard of q whose replays send jobs to to. A nil to
// turns replay off (the pages offer purge only). A nil q, or a bad option,
// is a *retry.InvalidError.
func New(q dlq.Queue, to dlq.Enqueuer, opts ...Option) (*Dashboard, error) {
	if q == nil {
		return nil, argerr.New("dashboard.New", nil, "the Queue must not be nil")
	}
	if f, ok := to.(dlq.EnqueueFunc); ok && f == nil {
		to = nil
	}
	d := &Dashboard{q: q, to: to, secret: make([]byte, 32), csrf: http.NewCrossOriginProtection(), jobs: map[string]*job{}}
	for i, o := range opts {
		if o == nil {
			return nil, argerr.New("dashboard.New", nil, "option "+strconv.Itoa(i)+" is nil")
		}
		if err := o(&d.c); err != nil {
			return nil, err
		}
	}
	rand.Read(d.secret)
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.routes()
	return d, nil
}

// Close stops the replays in progress — each stops before its next letter
// — and waits for them. The dashboard still shows pages afterwards, but
// starts no replay.
func (d *Dashboard) Close() error {
	if d == nil || d.cancel == nil {
		return nil
	}
	d.cancel()
	d.wg.Wait()
	return nil
}

func (d *Dashboard) routes() {
	d.mux = http.NewServeMux()
	d.mux.HandleFunc("GET /{$}", d.overview)
	d.mux.HandleFunc("GET /group", d.group)
	d.mux.HandleFunc("GET /letter", d.letter)
	d.mux.HandleFunc("GET /job", d.job)
	d.mux.HandleFunc("GET /style.css", d.style)
	d.mux.HandleFunc("POST /confirm", d.confirm)
	d.mux.HandleFunc("POST /run", d.run)
}

// ServeHTTP serves the dashboard. Mount it at a path of its own, with the
// prefix stripped:
//
//	mux.Handle("/dlq/", http.StripPrefix("/dlq", d))
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if d == nil || d.mux == nil {
		http.Error(w, "dashboard: not made by dashboard.New", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	if !d.authorized(r) {
		h.Set("WWW-Authenticate", `Basic realm="dead letter queue", charset="UTF-8"`)
		http.Error(w, "a token is required", http.StatusUnauthorized)
		return
	}
	if r.Method == http.MethodPost {
		if err := d.csrf.Check(r); err != nil {
			http.Error(w, "cross-origin request refused", http.StatusForbidden)
			return
		}
	}
	if r.URL.Path == "" {
		r.URL.Path = "/"
	}
	d.mux.ServeHTTP(w, r)
}

// authorized checks the token, if one is required, in constant time.
func (d *Dashboard) authorized(r *http.Request) bool {
	if d.c.token == "" {
		return true
	}
	given := ""
	if _, pw, ok := r.BasicAuth(); ok {
		given = pw
	} else if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		given = t
	}
	return subtle.ConstantTimeCompare([]byte(given), []byte(d.c.token)) == 1
}

// formToken returns an anti-forgery token for the forms of a page: the
// time it was made, signed. A page on another origin cannot read it.
func (d *Dashboard) formToken(now time.Time) string {
	ts := strconv.FormatInt(now.Unix(), 10)
	return ts + "." + d.sign(ts)
}

func (d *Dashboard) sign(ts string) string {
	m := hmac.New(sha256.New, d.secret)
	m.Write([]byte("dlq dashboard form " + ts))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// validToken reports whether t is a token this dashboard made within
// formLifetime of now.
func (d *Dashboard) validToken(t string, now time.Time) bool {
	ts, sig, ok := strings.Cut(t, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(d.sign(ts))) {
		return false
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return false
	}
	age := now.Sub(time.Unix(sec, 0))
	return age >= -time.Minute && age <= formLifetime
}

// newID returns a random id for a replay job.
func newID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}
