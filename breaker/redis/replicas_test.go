package redis_test

import (
	"errors"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"github.com/retrykit/retry"
	brredis "github.com/retrykit/retry/breaker/redis"
)

func TestReplicasIsCheckedWhenTheStoreIsMade(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	ring := goredis.NewRing(&goredis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}})
	defer ring.Close()
	tests := []struct {
		name   string
		client goredis.UniversalClient
		n      int
		ok     bool
	}{
		{"a negative count is refused", c, -1, false},
		{"a Ring cannot send a write and its WAIT on one connection", ring, 1, false},
		{"a Ring without replicas to wait for is fine", ring, 0, true},
		{"a Client may wait for replicas", c, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := brredis.NewStore(tt.client, brredis.Config{Replicas: tt.n})
			var inv *retry.InvalidError
			switch {
			case tt.ok && err != nil:
				t.Fatalf("New = %v", err)
			case !tt.ok && (!errors.As(err, &inv) || inv.Name != "redis.Config.Replicas"):
				t.Fatalf("New = %v; want an *InvalidError naming redis.Config.Replicas", err)
			}
		})
	}
}
