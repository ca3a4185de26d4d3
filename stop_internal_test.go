package retry

import (
	"testing"

	"github.com/retrykit/retry/policy"
)

// Every reason a call can stop has its sentinel in stopErrors — the
// caller's context has its own cause — so that a reason added to the one
// list without one fails here. The sentinels are distinct.
func TestEveryStopReasonHasItsSentinel(t *testing.T) {
	seen := map[error]policy.Stop{}
	for s := range policy.Stops() {
		if s == policy.StopCanceled {
			continue // its reason is the context's cause
		}
		if int(s) >= len(stopErrors) || stopErrors[s] == nil {
			t.Errorf("stop reason %q has no sentinel in stopErrors", s)
			continue
		}
		if prev, dup := seen[stopErrors[s]]; dup {
			t.Errorf("%q and %q share the sentinel %v", prev, s, stopErrors[s])
		}
		seen[stopErrors[s]] = s
	}
}
