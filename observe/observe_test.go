package observe_test

import (
	"context"
	"testing"

	"github.com/retrykit/retry/observe"
	"github.com/stretchr/testify/assert"
)

func TestKindLabelsAreStableAndDistinct(t *testing.T) {
	seen := map[string]observe.Kind{}
	for k := observe.AttemptDone; k <= observe.Request; k++ {
		label := k.String()
		assert.NotContains(t, label, "kind(", "kind %d has a label", k)
		prev, dup := seen[label]
		assert.False(t, dup, "%d and %d share %q", prev, k, label)
		seen[label] = k
	}
	assert.Equal(t, "kind(0)", observe.Kind(0).String())
	assert.Equal(t, "kind(200)", observe.Kind(200).String())
}

func TestFuncIsAnObserver(t *testing.T) {
	var got []observe.Kind
	var o observe.Observer = observe.Func(func(_ context.Context, e observe.Event) { got = append(got, e.Kind) })
	o.Observe(t.Context(), observe.Event{Kind: observe.GaveUp})
	assert.Equal(t, []observe.Kind{observe.GaveUp}, got)
}
