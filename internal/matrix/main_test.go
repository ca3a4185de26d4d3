package matrix_test

import (
	"testing"

	"github.com/retrykit/retry/internal/pgtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) }
