package breakerset

import (
	"strconv"
	"sync"
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/breaker"
)

func TestOneBreakerPerKeyMadeOnce(t *testing.T) {
	made := 0
	var mu sync.Mutex
	s := New("test", func(breaker.HostModel) breaker.Settings {
		mu.Lock()
		made++
		mu.Unlock()
		return breaker.Settings{}
	}, 0)
	key := breaker.HostModel{Host: "api.example", Model: "m"}
	var wg sync.WaitGroup
	got := make([]*breaker.Breaker, 8)
	for i := range got {
		wg.Go(func() {
			b, err := s.Get(new(retry.Retrier), key)
			if err != nil {
				t.Error(err)
			}
			got[i] = b
		})
	}
	wg.Wait()
	for _, b := range got {
		if b == nil || b != got[0] {
			t.Fatalf("Get returned different breakers for one key: %v", got)
		}
	}
	if s.Len() != 1 {
		t.Fatalf("Len = %d, want 1", s.Len())
	}
}

func TestAFullSetMakesNoMoreBreakers(t *testing.T) {
	s := New("test", func(breaker.HostModel) breaker.Settings { return breaker.Settings{} }, 3)
	for i := range 10 {
		b, err := s.Get(new(retry.Retrier), breaker.HostModel{Host: "h" + strconv.Itoa(i)})
		if err != nil {
			t.Fatal(err)
		}
		if (b != nil) != (i < 3) {
			t.Fatalf("key %d: breaker %v; want one for the first 3 keys only", i, b)
		}
	}
	if s.Len() != 3 {
		t.Fatalf("Len = %d, want 3", s.Len())
	}
	if b, _ := s.Get(new(retry.Retrier), breaker.HostModel{Host: "h0"}); b == nil {
		t.Fatal("a key made before the set was full lost its breaker")
	}
}

func TestABadSettingIsReportedAndNotCounted(t *testing.T) {
	s := New("test", func(breaker.HostModel) breaker.Settings { return breaker.Settings{Timeout: -1} }, 0)
	if _, err := s.Get(new(retry.Retrier), breaker.HostModel{Host: "h"}); err == nil {
		t.Fatal("Get accepted settings breaker.New refuses")
	}
	if s.Len() != 0 {
		t.Fatalf("Len = %d after a refused breaker, want 0", s.Len())
	}
}
