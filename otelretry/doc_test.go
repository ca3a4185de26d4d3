package otelretry_test

import (
	"os"
	"strings"
	"testing"

	"github.com/retrykit/retry/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheDocumentedOutcomesAreTheStops: the package documentation's table
// of retry.outcome values has a row for each policy.Stop, so that a reason
// added to the list is documented too.
func TestTheDocumentedOutcomesAreTheStops(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	rows := map[string]bool{}
	for line := range strings.SplitSeq(string(doc), "\n") {
		if cells := strings.Split(line, "|"); len(cells) == 4 && strings.HasPrefix(line, "//\t|") {
			rows[strings.TrimSpace(cells[1])] = true
		}
	}
	want := []string{"success", "other"}
	for s := range policy.Stops() {
		want = append(want, s.String())
	}
	for _, label := range want {
		assert.True(t, rows[label], "doc.go's retry.outcome table has no row %q", label)
	}
}
