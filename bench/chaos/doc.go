// Package chaosbench measures what the chaos package costs when it is
// switched off: a function wrapped by chaos.Wrap, and a transport from
// Scenario.Transport, against the bare function and transport in the same
// run, alone and under a Retrier and httpretry. Run it with
//
//	go test -run '^$' -bench . -benchmem -count 5 ./chaos/
//
// and compare each row with its "bare" row of the same run.
package chaosbench
