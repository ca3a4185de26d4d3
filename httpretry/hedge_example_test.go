package httpretry_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/hedge"
	"github.com/retrykit/retry/httpretry"
)

// A GET that hangs is sent again after a millisecond; the copy answers.
func ExampleWithHedging() {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			<-r.Context().Done() // a hiccup: the client gives up on this copy
			return
		}
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()

	r, err := retry.New()
	if err != nil {
		panic(err)
	}
	tr, err := httpretry.New(r, httpretry.WithHedging(hedge.Fixed(time.Millisecond), 2))
	if err != nil {
		panic(err)
	}
	defer tr.CloseIdleConnections()
	var res httpretry.Result
	ctx, _ := httpretry.WithResult(context.Background(), &res)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Printf("%s: attempts=%d hedges=%d winner=%d\n", body, res.Stats.Attempts, res.Stats.Hedges, res.Stats.Winner)
	// Output: hello: attempts=2 hedges=1 winner=2
}
