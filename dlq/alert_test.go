package dlq

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/retrykit/retry"
)

// start is when the alerter's observations begin.
var start = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

// step is one observation and the alerts it must raise, as "size+" (firing)
// or "growth-" (resolved).
type step struct {
	after time.Duration // since the previous step
	count int
	want  []string
}

func run(t *testing.T, a *alerter, steps []step) {
	t.Helper()
	now := start
	for i, s := range steps {
		now = now.Add(s.after)
		var got []string
		for _, al := range a.observe(now, s.count) {
			sign := "-"
			if al.Firing {
				sign = "+"
			}
			got = append(got, al.Kind+sign)
		}
		if !slices.Equal(got, s.want) {
			t.Fatalf("step %d (count %d at +%v): alerts %v, want %v", i, s.count, now.Sub(start), got, s.want)
		}
	}
}

func TestAlerterFiresOncePerCrossing(t *testing.T) {
	tests := []struct {
		name  string
		th    Thresholds
		steps []step
	}{
		{"size fires when it passes 10 and not again for each letter", Thresholds{Growth: Off}, []step{
			{0, 10, nil}, {time.Minute, 11, []string{"size+"}}, {time.Minute, 12, nil}, {time.Hour, 500, nil},
		}},
		{"size resolves when back at the threshold, and fires again on the next crossing", Thresholds{Growth: Off}, []step{
			{0, 11, []string{"size+"}}, {time.Minute, 10, []string{"size-"}}, {time.Minute, 3, nil}, {time.Minute, 11, []string{"size+"}},
		}},
		{"growth fires at more than 10 new letters within the hour", Thresholds{Size: Off}, []step{
			{0, 100, nil}, {10 * time.Minute, 105, nil}, {10 * time.Minute, 110, nil}, {10 * time.Minute, 111, []string{"growth+"}}, {time.Minute, 130, nil},
		}},
		{"growth of 8 an hour never fires", Thresholds{Size: Off}, []step{
			{0, 0, nil}, {30 * time.Minute, 4, nil}, {40 * time.Minute, 8, nil}, {40 * time.Minute, 12, nil}, {40 * time.Minute, 16, nil},
		}},
		{"growth resolves when the arrivals leave the window", Thresholds{Size: Off}, []step{
			{0, 0, nil}, {time.Minute, 20, []string{"growth+"}}, {59 * time.Minute, 20, nil}, {2 * time.Minute, 20, []string{"growth-"}},
		}},
		{"arrivals after a replay count from the lowest point", Thresholds{Size: Off}, []step{
			{0, 8, nil}, {time.Minute, 0, nil}, {time.Minute, 11, []string{"growth+"}},
		}},
		{"a sparse observation compares with the last one before the window", Thresholds{Size: Off}, []step{
			{0, 0, nil}, {3 * time.Hour, 15, []string{"growth+"}},
		}},
		{"both fire together and resolve apart", Thresholds{Size: 5, Growth: 5, Window: 10 * time.Minute}, []step{
			{0, 0, nil}, {time.Minute, 6, []string{"size+", "growth+"}}, {15 * time.Minute, 6, []string{"growth-"}}, {time.Minute, 0, []string{"size-"}},
		}},
		{"a clock that goes back does not break the window", Thresholds{Size: Off}, []step{
			{0, 0, nil}, {-time.Hour, 5, nil}, {time.Minute, 11, []string{"growth+"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := newAlerter(tt.th)
			if err != nil {
				t.Fatal(err)
			}
			run(t, a, tt.steps)
		})
	}
}

func TestTheZeroThresholdsAreTheDefaults(t *testing.T) {
	a, err := newAlerter(Thresholds{})
	if err != nil {
		t.Fatal(err)
	}
	run(t, a, []step{{0, 0, nil}, {time.Minute, 10, nil}, {59 * time.Minute, 11, []string{"size+", "growth+"}}})
}

func TestAlerterKeepsBoundedMemory(t *testing.T) {
	a, _ := newAlerter(Thresholds{})
	now := start
	for i := range 100_000 { // a letter every 100ms for almost 3 hours
		now = now.Add(100 * time.Millisecond)
		a.observe(now, i)
	}
	if n := a.observe(now, 100_000); len(n) != 0 {
		t.Fatalf("alerts %v; want none: both fired long ago", n)
	}
	if got := fmt.Sprintf("%v", Alert{Kind: "growth", Firing: true, Growth: 36000, Threshold: 10, Window: time.Hour}); got !=
		"dead letter queue grew by 36000 letters within 1h0m0s (more than 10)" {
		t.Fatal(got)
	}
}

func TestABadThresholdIsNamed(t *testing.T) {
	tests := []struct {
		th    Thresholds
		field string
	}{
		{Thresholds{Size: -2}, "dlq.Thresholds.Size"},
		{Thresholds{Growth: -5}, "dlq.Thresholds.Growth"},
		{Thresholds{Window: -time.Second}, "dlq.Thresholds.Window"},
		{Thresholds{Window: time.Millisecond}, "dlq.Thresholds.Window"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%+v is refused, naming %s", tt.th, tt.field), func(t *testing.T) {
			_, err := NewMonitor(&memory{}, MonitorConfig{Thresholds: tt.th})
			var inv *retry.InvalidError
			if !errors.As(err, &inv) || inv.Name != tt.field {
				t.Fatalf("NewMonitor = %v; want an *InvalidError naming %s", err, tt.field)
			}
		})
	}
}

func TestAlertsDescribeThemselves(t *testing.T) {
	tests := []struct {
		a    Alert
		want string
	}{
		{Alert{Kind: "size", Firing: true, Count: 11, Threshold: 10}, "dead letter queue holds 11 letters (more than 10)"},
		{Alert{Kind: "size", Count: 3, Threshold: 10}, "dead letter queue back to 3 letters (at most 10)"},
		{Alert{Kind: "growth", Growth: 2, Threshold: 10, Window: time.Hour}, "dead letter queue growth back to 2 letters within 1h0m0s (at most 10)"},
	}
	for _, tt := range tests {
		if got := tt.a.String(); got != tt.want {
			t.Errorf("String = %q, want %q", got, tt.want)
		}
	}
}
