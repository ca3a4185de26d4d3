package dlq

import (
	"fmt"
	"time"

	"github.com/retrykit/retry/internal/argerr"
)

// Alert thresholds used for zero fields of Thresholds.
const (
	defaultSize   = 10        // more than 10 letters
	defaultGrowth = 10        // more than 10 new letters …
	defaultWindow = time.Hour // … within an hour
)

// Off disables a threshold of Thresholds.
const Off = -1

// growthBuckets is how finely the growth window is kept: the growth is
// exact to 1/60 of the window, in memory bounded whatever the rate.
const growthBuckets = 60

// Thresholds says when a dead letter queue needs a person. Its zero value
// is the default: more than 10 letters, or more than 10 new letters within
// an hour.
type Thresholds struct {
	// Size: alert when the queue holds more than Size letters. 0 means 10;
	// Off disables it.
	Size int
	// Growth: alert when the queue grew by more than Growth letters within
	// Window. 0 means 10; Off disables it.
	Growth int
	// Window is the span over which growth is measured. 0 means an hour;
	// otherwise at least a second.
	Window time.Duration
}

func (t Thresholds) resolve() (Thresholds, error) {
	switch {
	case t.Size < Off:
		return t, argerr.New("dlq.Thresholds.Size", t.Size, "must be at least 0 (0 means 10), or Off")
	case t.Growth < Off:
		return t, argerr.New("dlq.Thresholds.Growth", t.Growth, "must be at least 0 (0 means 10), or Off")
	case t.Window < 0 || t.Window > 0 && t.Window < time.Second:
		return t, argerr.New("dlq.Thresholds.Window", t.Window, "must be at least 1s (0 means 1h)")
	}
	t.Size = cmpOr(t.Size, defaultSize)
	t.Growth = cmpOr(t.Growth, defaultGrowth)
	t.Window = cmpOr(t.Window, defaultWindow)
	return t, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// The kinds of alert, Alert.Kind: the threshold crossed.
const (
	alertSize   = "size"   // the number of letters crossed Thresholds.Size
	alertGrowth = "growth" // the growth within the window crossed Thresholds.Growth
)

// Alert reports a threshold crossed: upwards (Firing), or back down
// (resolved).
type Alert struct {
	Kind      string        // the threshold crossed: "size" (Thresholds.Size) or "growth" (Thresholds.Growth)
	Firing    bool          // true when crossing up, false when back at or below
	At        time.Time     // when the crossing was observed
	Count     int           // letters in the queue
	Growth    int           // letters added within Window
	Threshold int           // the threshold crossed
	Window    time.Duration // the growth window
	Groups    []Group       // the largest root-cause groups, when a Monitor could list them
}

// String describes the alert, e.g. "dead letter queue holds 11 letters
// (more than 10)".
func (a Alert) String() string {
	switch {
	case a.Kind == alertSize && a.Firing:
		return fmt.Sprintf("dead letter queue holds %d letters (more than %d)", a.Count, a.Threshold)
	case a.Kind == alertSize:
		return fmt.Sprintf("dead letter queue back to %d letters (at most %d)", a.Count, a.Threshold)
	case a.Firing:
		return fmt.Sprintf("dead letter queue grew by %d letters within %v (more than %d)", a.Growth, a.Window, a.Threshold)
	}
	return fmt.Sprintf("dead letter queue growth back to %d letters within %v (at most %d)", a.Growth, a.Window, a.Threshold)
}

// alerter turns observations of a queue's size into alerts, once per
// crossing of a threshold, not once per letter. It takes the time as an
// argument, so it needs no clock; it is not safe for concurrent use (a
// Monitor serialises it).
type alerter struct {
	t              Thresholds
	size, growth   bool // firing
	buckets        []bucket
	bucketDuration time.Duration
}

// bucket is the lowest count seen in one slice of the window.
type bucket struct {
	n   int64 // index: time / bucketDuration
	min int
}

// newAlerter returns an alerter for t, or a *retry.InvalidError naming a bad
// field.
func newAlerter(t Thresholds) (*alerter, error) {
	t, err := t.resolve()
	if err != nil {
		return nil, err
	}
	return &alerter{t: t, bucketDuration: max(t.Window/growthBuckets, 1)}, nil
}

// observe records that the queue held count letters at now, and returns the
// alerts whose threshold this observation crossed, in either direction:
// usually none.
//
// Growth is count minus the lowest count observed in the window (and the
// last observation before it, as the baseline): letters that arrived since
// the queue was last at its lowest, so a replay that empties the queue does
// not hide the arrivals that follow it.
func (a *alerter) observe(now time.Time, count int) []Alert {
	growth := count - a.record(now, count)
	var out []Alert
	if a.t.Size != Off {
		if firing := count > a.t.Size; firing != a.size {
			a.size = firing
			out = append(out, a.alert(alertSize, firing, now, count, growth, a.t.Size))
		}
	}
	if a.t.Growth != Off {
		if firing := growth > a.t.Growth; firing != a.growth {
			a.growth = firing
			out = append(out, a.alert(alertGrowth, firing, now, count, growth, a.t.Growth))
		}
	}
	return out
}

func (a *alerter) alert(k string, firing bool, now time.Time, count, growth, threshold int) Alert {
	return Alert{Kind: k, Firing: firing, At: now, Count: count, Growth: growth, Threshold: threshold, Window: a.t.Window}
}

// record adds the observation and returns the lowest count of the window.
func (a *alerter) record(now time.Time, count int) int {
	n := now.UnixNano() / int64(a.bucketDuration)
	if last := len(a.buckets) - 1; last >= 0 && n <= a.buckets[last].n {
		a.buckets[last].min = min(a.buckets[last].min, count) // same slice, or the clock went back
	} else {
		a.buckets = append(a.buckets, bucket{n: n, min: count})
	}
	start := (now.UnixNano() - int64(a.t.Window)) / int64(a.bucketDuration)
	drop := 0
	for drop+1 < len(a.buckets) && a.buckets[drop+1].n <= start {
		drop++ // keep one bucket at or before the window's start: the baseline
	}
	a.buckets = append(a.buckets[:0], a.buckets[drop:]...)
	low := count
	for _, b := range a.buckets {
		low = min(low, b.min)
	}
	return low
}
