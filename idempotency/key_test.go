package idempotency_test

import (
	"strings"
	"testing"

	"github.com/retrykit/retry"
	"github.com/retrykit/retry/idempotency"
	"github.com/stretchr/testify/assert"
)

func TestValidateKey(t *testing.T) {
	assert.NoError(t, idempotency.ValidateKey("run-7/step-2/3f9a"))
	err := idempotency.ValidateKey(strings.Repeat("k", 300))
	assert.ErrorIs(t, err, retry.ErrInvalid)
	assert.Contains(t, err.Error(), "idempotency.ValidateKey(kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk…): 300 characters: the limit is 255")
}
