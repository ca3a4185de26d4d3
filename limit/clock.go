package limit

import "time"

// epoch anchors the default clock: readings are monotonic durations since
// the package was loaded.
var epoch = time.Now()

// monoNow is the default clock of Adaptive and Throttler.
func monoNow() time.Duration { return time.Since(epoch) }

// seconds converts a duration to float seconds.
func seconds(d time.Duration) float64 { return d.Seconds() }

// duration converts float seconds to a duration, saturating.
func duration(s float64) time.Duration {
	if s >= float64(1<<63-1)/float64(time.Second) {
		return 1<<63 - 1
	}
	return time.Duration(s * float64(time.Second))
}
