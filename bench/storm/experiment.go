package main

import (
	"runtime"
	"slices"
	"sync"
	"time"
)

// config is one experiment: the rows, under every scenario, for each seed.
type config struct {
	seeds     []uint64
	scenarios []scenario
	rows      []*row
}

// The scenarios of the full experiment: the sanity runs without a trigger,
// then the four triggers.
var allScenarios = []scenario{
	{700, noTrigger}, {900, noTrigger},
	{700, stall}, {900, stall},
	{700, half}, {900, half},
}

func allRows() []*row {
	rs := make([]*row, len(rows))
	for i := range rows {
		rs[i] = &rows[i]
	}
	return rs
}

// cell is one run: a row under a scenario with a seed.
type cell struct {
	row  *row
	sc   scenario
	seed uint64
	m    measures
	// goodput is the calls answered in time in each second.
	goodput []float64
}

// experiment runs every cell, in parallel, each depending on its seed alone.
func experiment(c config) []cell {
	var cells []cell
	for _, sc := range c.scenarios {
		for _, r := range c.rows {
			for _, seed := range c.seeds {
				cells = append(cells, cell{row: r, sc: sc, seed: seed})
			}
		}
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for j := range jobs {
				c := &cells[j]
				res := run(c.row, c.sc, c.seed)
				c.m, c.goodput = measure(&res), perSecond(res.good)
			}
		})
	}
	for j := range cells {
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	return cells
}

func perSecond(good []int32) []float64 {
	per := int(time.Second / bin)
	out := make([]float64, len(good)/per)
	for i, g := range good {
		out[i/per] += float64(g)
	}
	return out
}

// summary is a row under a scenario over its seeds: the median of each
// measure, and the range of the recovery.
type summary struct {
	row                    *row
	sc                     scenario
	m                      measures // medians
	recoveryLo, recoveryHi time.Duration
	seeds                  int
}

// summarize groups the cells by row and scenario, in the order they came.
func summarize(cells []cell) []summary {
	var out []summary
	for i := 0; i < len(cells); {
		j := i
		for j < len(cells) && cells[j].row == cells[i].row && cells[j].sc == cells[i].sc {
			j++
		}
		out = append(out, summarizeOne(cells[i:j]))
		i = j
	}
	return out
}

func summarizeOne(cs []cell) summary {
	s := summary{row: cs[0].row, sc: cs[0].sc, seeds: len(cs)}
	get := func(f func(m measures) float64) float64 {
		v := make([]float64, len(cs))
		for i, c := range cs {
			v[i] = f(c.m)
		}
		return median(v)
	}
	s.m.amplification = get(func(m measures) float64 { return m.amplification })
	s.m.wastedPct = get(func(m measures) float64 { return m.wastedPct })
	s.m.failedPct = get(func(m measures) float64 { return m.failedPct })
	s.m.refusedPct = get(func(m measures) float64 { return m.refusedPct })
	s.m.peak = int(get(func(m measures) float64 { return float64(m.peak) }))
	s.m.p99 = time.Duration(get(func(m measures) float64 { return float64(m.p99) }))
	// never sorts last: the median of (10 s, never, never) is never.
	rec := make([]time.Duration, len(cs))
	for i, c := range cs {
		rec[i] = c.m.recovery
		if rec[i] == never {
			rec[i] = 1<<63 - 1
		}
	}
	slices.Sort(rec)
	back := func(d time.Duration) time.Duration {
		if d == 1<<63-1 {
			return never
		}
		return d
	}
	s.m.recovery, s.recoveryLo, s.recoveryHi = back(rec[len(rec)/2]), back(rec[0]), back(rec[len(rec)-1])
	return s
}

func median(v []float64) float64 {
	slices.Sort(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

// lookup returns the summary of a row under a scenario.
func lookup(ss []summary, name, scope string, sc scenario) (summary, bool) {
	for _, s := range ss {
		if s.row.name == name && s.row.scope == scope && s.sc == sc {
			return s, true
		}
	}
	return summary{}, false
}
