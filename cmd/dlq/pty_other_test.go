//go:build !linux

package main

import "testing"

// onTerminal needs Linux's pseudo-terminals.
func onTerminal(t *testing.T, answer string, args ...string) result {
	t.Helper()
	t.Skip("pseudo-terminals are opened the Linux way only")
	return result{}
}
