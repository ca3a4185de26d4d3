//go:build race

package main

// raceEnabled: the race detector slows the event loop tenfold.
const raceEnabled = true
