package budget

import "time"

// The explicit-time forms of the Ratio's methods, for the tests.
func (b *Ratio) RecordAt(now time.Time, a Attempt) { b.recordAt(now, a) }
func (b *Ratio) AllowAt(now time.Time) bool        { return b.allowAt(now) }
func (b *Ratio) StateAt(now time.Time) RatioState  { return b.stateAt(now) }
