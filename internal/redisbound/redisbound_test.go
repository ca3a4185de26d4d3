package redisbound

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCallReturnsWhatTheCallReturns(t *testing.T) {
	v, err := Call(context.Background(), "", func(context.Context) (int, error) { return 7, nil })
	if v != 7 || err != nil {
		t.Fatalf("Call = %d, %v; want 7, nil", v, err)
	}
}

func TestCallReturnsAtTheContextsEndWhileTheCallHangs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	release := make(chan struct{})
	_, err := Call(ctx, "limit/redis: ", func(context.Context) (int, error) {
		<-release // a hung server: the call ignores its context
		return 0, nil
	})
	close(release)
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "limit/redis: no answer from Redis: ") {
		t.Fatalf("Call = %v; want the context's cause, prefixed", err)
	}
}
