// The placeholders the package docs' snippets use: doc_snippets_test.go
// type-checks each package's snippets after this file. Not a program.
package readme

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/backoff"
	"github.com/retrykit/retry/breaker"
	"github.com/retrykit/retry/budget"
	"github.com/retrykit/retry/classify"
	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/hedge"
	"github.com/retrykit/retry/httpretry"
	"github.com/retrykit/retry/idempotency"
	"github.com/retrykit/retry/jitter"
	"github.com/retrykit/retry/limit"
	"github.com/retrykit/retry/observe"
	"github.com/retrykit/retry/policy"
	"github.com/retrykit/retry/stream"
)

type Reply struct{ Text string }

var (
	ctx    context.Context
	client interface {
		Complete(context.Context, string) (Reply, error)
	}
	prompt, host, model, runID, id, url string
	body, msg                           []byte
	input                               any
	errInvalidInput                     = errors.New("invalid input")
	letters                             []dlq.Letter
	req                                 *http.Request
	r                                   *retry.Retrier
)

func scheduleIn(time.Duration)                  {}
func bad(any) bool                              { return false }
func call(context.Context) error                { return nil }
func op(context.Context) error                  { return nil }
func generate(context.Context) error            { return nil }
func keep(any)                                  {}
func use(any)                                   {}
func summarize(context.Context) ([]byte, error) { return nil, nil }
func process(context.Context) error             { return nil }
func enqueue(context.Context, dlq.Job) error    { return nil }
func charge(context.Context) error              { return nil }

var (
	_ = fmt.Sprint
	_ = log.Print
	_ = slog.Default
	_ = backoff.Constant(0)
	_ = breaker.ErrOpen
	_ budget.Budget
	_ = classify.Default
	_ = httpretry.Redact
	_ = idempotency.HeaderKey
	_ = jitter.Full{}
	_ = limit.OutcomeOf
	_ observe.Observer
	_ = policy.LLMCall
	_ = retry.Do
	_ stream.Chunks[int]
	_ = synctest.Test
	_ testing.T
)
