package classify

import "context"

// CheckResult returns op with its successful results classified by f: a
// result f says to retry comes back with an error — "result not accepted
// (<f's reason>)", marked with f's decision (Mark) — so that a retry loop treats it as a failed
// attempt and retries it like any failure, while the value is still returned;
// any other verdict accepts the result. After the last attempt the retry
// loop's *retry.Error carries that error, and DoValue returns the rejected
// value with it.
//
// The types are checked by the compiler: f classifies exactly what op
// returns. A nil op or f returns op unchanged (the retry loop reports a nil
// op).
func CheckResult[T any](op func(context.Context) (T, error), f func(result T) Decision) func(context.Context) (T, error) {
	if op == nil || f == nil {
		return op
	}
	return func(ctx context.Context) (T, error) {
		v, err := op(ctx)
		if err != nil {
			return v, err
		}
		if d := f(v); d.Verdict == Retry {
			return v, Mark(&rejected{d.Reason}, d)
		}
		return v, nil
	}
}

// rejected is the failure of a rejected result: "result not accepted
// (<reason>)".
type rejected struct{ reason string }

func (e *rejected) Error() string { return ReasonResultNotAccepted + " (" + e.reason + ")" }
