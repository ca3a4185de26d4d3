package main

import (
	"bytes"
	"regexp"
	"testing"
)

func TestDecorator(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), &out, 100); err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{
		`(?m)^LLM call +ok \(a short summary\): 2 call\(s\) so far`,
		`(?m)^DB write +ok \(saved\): 3 call\(s\) so far`,
		`(?m)^email send +failed: not retryable: http 422 Unprocessable Entity \(1 call\(s\) so far\)$`,
		`(?m)^payment without key +failed: idempotency key required .* \(0 call\(s\) so far\)$`,
		`(?m)^payment with key +ok \(receipt for charge:order-4417\): 2 call\(s\) so far`,
		`(?m)^health check +failed: attempts exhausted: connection refused \(1 call\(s\) so far\)$`,
	} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("output does not match %s:\n%s", re, out.String())
		}
	}
}
