package httpretry

import (
	"testing"

	"github.com/retrykit/retry/policy"
)

// TestEveryStopReasonHasAnAnswer fails when policy.Stop gains a reason
// that the table of what RoundTrip returns does not map: add it to answers
// and to the package documentation.
func TestEveryStopReasonHasAnAnswer(t *testing.T) {
	for s := range policy.Stops() {
		if int(s) >= len(answers) || answers[s] == unmapped {
			t.Errorf("the stop reason %q (%d) has no entry in answers: say whether RoundTrip returns the last response or the error", s, int(s))
		}
	}
	if answers[policy.Continue] != unmapped {
		t.Error("Continue is not a reason to stop")
	}
}
