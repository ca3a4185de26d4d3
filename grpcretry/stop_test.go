package grpcretry

import (
	"testing"

	"github.com/retrykit/retry/policy"
	"google.golang.org/grpc/codes"
)

// Every reason a call can stop has its row in stopStatuses: a reason added
// to policy.Stop fails here until the table says what status it has.
func TestEveryStopReasonHasAStatus(t *testing.T) {
	n := 0
	for stop := range policy.Stops() {
		n++
		if int(stop) >= len(stopStatuses) || stopStatuses[stop].from == 0 {
			t.Errorf("policy.Stop %v has no row in stopStatuses", stop)
			continue
		}
		if row := stopStatuses[stop]; row.code == codes.OK {
			t.Errorf("policy.Stop %v has the status OK", stop)
		}
	}
	if n == 0 {
		t.Fatal("policy.Stops() lists no reason")
	}
}
