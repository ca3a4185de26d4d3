package main

import (
	"fmt"
	"math"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// writePlot draws one panel per model and workload: the p99.9 latency of
// each strategy against the extra requests it sent, on a log scale, so the
// price of each cut in the tail reads off the x axis.
func writePlot(path string, rows []row) error {
	type key struct{ model, workload string }
	var keys []key
	seen := map[key]bool{}
	for _, r := range rows {
		if k := (key{r.model, r.workload}); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	cols := 2
	plots := make([][]*plot.Plot, (len(keys)+cols-1)/cols)
	for i, k := range keys {
		p, err := panel(rows, k.model, k.workload)
		if err != nil {
			return err
		}
		plots[i/cols] = append(plots[i/cols], p)
	}
	img := vgimg.NewWith(vgimg.UseWH(28*vg.Centimeter, 12*vg.Centimeter*vg.Length(len(plots))/1.5), vgimg.UseDPI(110))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(plots), Cols: cols, PadX: vg.Centimeter, PadY: vg.Centimeter,
		PadTop: 6 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j := range plots[i] {
			plots[i][j].Draw(canvases[i][j])
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// panel plots, for one model and workload, a point per strategy: p99.9
// against extra requests, with the p50 and p99 below it on the same x.
func panel(rows []row, model, workload string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s, %s", model, workload)
	p.X.Label.Text = "extra requests (%)"
	p.Y.Label.Text = "latency (ms, log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = ticks125{}
	p.Legend.Top, p.Legend.Left = false, false
	p.Add(plotter.NewGrid())
	var lines []any
	for _, q := range []struct {
		name string
		v    func(row) float64
	}{{"p50", func(r row) float64 { return r.p50 }}, {"p99", func(r row) float64 { return r.p99 }}, {"p99.9", func(r row) float64 { return r.p999 }}} {
		var xys plotter.XYs
		for _, r := range rows {
			if r.model == model && r.workload == workload {
				xys = append(xys, plotter.XY{X: r.extraPct, Y: max(q.v(r), 0.1)})
			}
		}
		lines = append(lines, q.name, xys)
	}
	if err := plotutil.AddScatters(p, lines...); err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.model == model && r.workload == workload {
			l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: r.extraPct, Y: max(r.p999, 0.1)}}, Labels: []string{" " + r.strategy}})
			if err != nil {
				return nil, err
			}
			l.TextStyle[0].Font.Size = vg.Points(7)
			p.Add(l)
		}
	}
	return p, nil
}

// ticks125 labels 1, 2 and 5 times each power of ten, or every multiple
// when that gives fewer than three (and the default ticks when even that
// gives fewer than two): a panel whose latencies stay within one
// decade still gets labels.
type ticks125 struct{}

func (t ticks125) Ticks(lo, hi float64) []plot.Tick {
	if ticks := t.with(lo, hi, []float64{1, 2, 5}); len(ticks) >= 3 {
		return ticks
	}
	if ticks := t.with(lo, hi, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}); len(ticks) >= 2 {
		return ticks
	}
	return plot.DefaultTicks{}.Ticks(lo, hi)
}

func (ticks125) with(lo, hi float64, mantissas []float64) []plot.Tick {
	var ticks []plot.Tick
	for p := math.Pow(10, math.Floor(math.Log10(lo))); p <= hi; p *= 10 {
		for _, m := range mantissas {
			if v := m * p; v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	return ticks
}
