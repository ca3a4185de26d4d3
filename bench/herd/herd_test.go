package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// small is an experiment quick enough for go test -race.
var small = config{seed: 1, runs: 20, clients: []int{10, 50}}

func byName(points []point) map[string]map[int]point {
	m := map[string]map[int]point{}
	for _, p := range points {
		if m[p.strategy] == nil {
			m[p.strategy] = map[int]point{}
		}
		m[p.strategy][p.clients] = p
	}
	return m
}

func TestEveryClientFinishes(t *testing.T) {
	for _, s := range strategies {
		for _, n := range small.clients {
			o := run(&s, n, newRand(small.seed, 0))
			if o.calls < n {
				t.Errorf("%s, %d clients: %d writes; every client must write at least once", s.name, n, o.calls)
			}
			if o.complete <= 0 {
				t.Errorf("%s, %d clients: never completed", s.name, n)
			}
		}
	}
}

func TestNoJitterMakesFarMoreCallsThanJitter(t *testing.T) {
	m := byName(experiment(small))
	const n = 50
	exponential := m["exponential"][n]
	for _, s := range []string{"full", "equal", "decorrelated"} {
		if p := m[s][n]; exponential.calls < 1.4*p.calls {
			t.Errorf("%d clients: exponential without jitter made %.0f calls, %s jitter %.0f; want at least 1.4 times as many",
				n, exponential.calls, s, p.calls)
		}
		if p := m[s][n]; exponential.completionMS < 3*p.completionMS {
			t.Errorf("%d clients: exponential without jitter took %.0f ms, %s jitter %.0f ms; want at least 3 times as long",
				n, exponential.completionMS, s, p.completionMS)
		}
	}
	if none := m["nobackoff"][n]; none.calls <= exponential.calls {
		t.Errorf("%d clients: no backoff made %.0f calls, exponential %.0f; want more", n, none.calls, exponential.calls)
	}
}

func TestTheSameSeedGivesTheSameResults(t *testing.T) {
	a, b := experiment(small), experiment(small)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("point %d: %+v, then %+v", i, a[i], b[i])
		}
	}
	other := small
	other.seed = 2
	if c := experiment(other); c[len(c)-1] == a[len(a)-1] {
		t.Errorf("seeds 1 and 2 gave the same point %+v", a[len(a)-1])
	}
}

func TestHerdWritesTheTableTheCSVAndThePlot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new")
	var out bytes.Buffer
	if err := herd(config{seed: 1, runs: 2, clients: []int{10, 20}}, dir, &out); err != nil {
		t.Fatal(err)
	}
	for _, s := range strategies {
		if !strings.Contains(out.String(), s.name) {
			t.Errorf("the table does not name %s:\n%s", s.name, out.String())
		}
	}
	csv, err := os.ReadFile(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	if lines[0] != "strategy,clients,calls,completion_ms" || len(lines) != 1+2*len(strategies) {
		t.Errorf("results.csv:\n%s", csv)
	}
	png, err := os.ReadFile(filepath.Join(dir, "herd.png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("herd.png is not a PNG (%v)", err)
	}
}
