package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/sqlite"
)

// world is everything a run starts: the fakes, the database, the queue.
type world struct {
	chaos   chaos
	gateway *gateway
	mail    *mailServer
	jobs    jobsDB
	letters *dlq.Monitor
	events  *events
	llmURL  string
	mailURL string
	path    string
	closers []func() error
}

func (wd *world) Close() {
	for i := len(wd.closers) - 1; i >= 0; i-- {
		wd.closers[i]()
	}
}

// run processes cfg.jobs jobs, again for those whose delivery died or could
// not tell whether the email went out, prints the summary to w and returns
// the totals.
func run(ctx context.Context, w io.Writer, cfg config) (outcome, error) {
	start := time.Now()
	wd, err := build(ctx, cfg)
	if err != nil {
		return outcome{}, err
	}
	defer wd.Close()
	st, err := steps(cfg.speed)
	if err != nil {
		return outcome{}, err
	}
	p, err := wd.pipeline(cfg, st)
	if err != nil {
		return outcome{}, err
	}
	if err := wd.jobs.enqueue(ctx, cfg.jobs); err != nil {
		return outcome{}, err
	}
	first := make([]delivery, cfg.jobs)
	for i := range first {
		first[i] = p.chaos.firstDelivery(i + 1)
	}
	// Each pass delivers again the messages the previous one left
	// unacknowledged; a redelivery's crash field is zero, so it runs to the
	// end, and the last one maxDeliveries allows ends its job: the passes
	// stop.
	for ds := first; len(ds) > 0; {
		if ds, err = p.pass(ctx, ds, cfg.workers); err != nil {
			return outcome{}, err
		}
	}
	return wd.report(ctx, w, cfg, st, time.Since(start))
}

// build starts the fakes and opens the database and the dead letter queue.
func build(ctx context.Context, cfg config) (*world, error) {
	c := chaos{seed: cfg.seed, failRate: cfg.failRate, redeliver: cfg.redeliver}
	wd := &world{chaos: c, gateway: newGateway(c), mail: newMailServer(c), events: &events{}}
	llm := httptest.NewServer(wd.gateway)
	mail := httptest.NewServer(wd.mail.handler())
	wd.llmURL, wd.mailURL = llm.URL, mail.URL
	wd.closers = append(wd.closers, closer(llm.Close), closer(mail.Close))
	if err := wd.open(ctx, cfg.dbPath); err != nil {
		wd.Close()
		return nil, err
	}
	return wd, nil
}

func closer(f func()) func() error { return func() error { f(); return nil } }

// open creates the SQLite file: the jobs table, and the dead letter queue's
// tables next to it, so that one file shows everything.
func (wd *world) open(ctx context.Context, path string) error {
	if path == "" {
		dir, err := os.MkdirTemp("", "pipeline-")
		if err != nil {
			return err
		}
		wd.closers = append(wd.closers, func() error { return os.RemoveAll(dir) })
		path = filepath.Join(dir, "pipeline.db")
	} else if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("-db %s: the file exists; give a new path", path)
	}
	wd.path = path
	jobs, err := openJobs(ctx, path)
	if err != nil {
		return err
	}
	wd.jobs = jobs
	wd.closers = append(wd.closers, jobs.Close)
	q, err := sqlite.Open(ctx, path, sqlite.Config{})
	if err != nil {
		return err
	}
	wd.closers = append(wd.closers, q.Close)
	// The Monitor raises the exercise's alerts (more than 10 letters, more than
	// 10 new ones within an hour) to the summary instead of the log.
	wd.letters, err = dlq.NewMonitor(q, dlq.MonitorConfig{OnAlert: wd.events.dlqAlert, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	return wd.letters.Check(ctx)
}

func (wd *world) pipeline(cfg config, st [3]step) (*pipeline, error) {
	rs, err := newRetriers(st)
	if err != nil {
		return nil, err
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = cfg.workers // one kept-alive connection per worker and server
	wd.closers = append(wd.closers, closer(t.CloseIdleConnections))
	var rt http.RoundTripper = t
	if cfg.network != nil {
		rt = cfg.network.Transport(t)
	}
	return &pipeline{
		jobs:    wd.jobs,
		letters: wd.letters,
		r:       rs,
		chaos:   wd.chaos,
		client:  &http.Client{Transport: rt},
		llmURL:  wd.llmURL,
		mailURL: wd.mailURL,
		speed:   cfg.speed,
		claim:   !cfg.noClaim,
		events:  wd.events,
	}, nil
}
