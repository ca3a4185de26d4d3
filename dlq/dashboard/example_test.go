package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/retrykit/retry/dlq"
	"github.com/retrykit/retry/dlq/dashboard"
)

func ExampleNew() {
	q, _ := dlq.NewMemory(0)
	l, _ := dlq.NewLetter(dlq.Job{ID: "42", Source: "llm-jobs"}, errors.New("timeout after 3012ms"), time.Now())
	q.Put(context.Background(), l)

	// Replays go to the job's queue; here, a function that would enqueue it.
	enqueue := dlq.EnqueueFunc(func(ctx context.Context, job dlq.Job) error { return nil })
	d, err := dashboard.New(q, enqueue, dashboard.WithToken("a-long-random-token-from-your-secrets"))
	if err != nil {
		panic(err)
	}
	defer d.Close() // stops the replays in progress

	mux := http.NewServeMux()
	mux.Handle("/dlq/", http.StripPrefix("/dlq", d))

	req := httptest.NewRequest(http.MethodGet, "/dlq/", nil)
	req.SetBasicAuth("admin", "a-long-random-token-from-your-secrets")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, req)
	fmt.Println(w.Code, strings.Contains(w.Body.String(), `<span class="n" id="count">1</span> letters`))
	fmt.Println(w.Header().Get("Content-Security-Policy"))
	// Output:
	// 200 true
	// default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'
}
