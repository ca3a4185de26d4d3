package main

import (
	"fmt"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// writePlot draws the two graphs of the post side by side — calls and
// completion time against the number of clients, a line per strategy — and
// writes them as a PNG.
func writePlot(path string, points []point, c config) error {
	calls, err := panel(points, c, "Calls (writes the server saw)", "calls", func(p point) float64 { return p.calls })
	if err != nil {
		return err
	}
	times, err := panel(points, c, "Completion time (last client done)", "time (ms, log scale)", func(p point) float64 { return p.completionMS })
	if err != nil {
		return err
	}
	// Without jitter the herd takes ten times longer: on a linear scale the
	// jittered strategies would lie flat along the axis.
	times.Y.Scale = plot.LogScale{}
	times.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	times.Y.Max *= 10 // room for the legend above the lines
	img := vgimg.NewWith(vgimg.UseWH(26*vg.Centimeter, 11*vg.Centimeter), vgimg.UseDPI(120))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Centimeter, PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter,
		PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	canvases := plot.Align([][]*plot.Plot{{calls, times}}, tiles, dc)
	calls.Draw(canvases[0][0])
	times.Draw(canvases[0][1])

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

// panel is one graph: value against clients, a line with points per strategy.
func panel(points []point, c config, title, ylabel string, value func(point) float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s, mean of %d runs", title, c.runs)
	p.X.Label.Text = "clients"
	p.Y.Label.Text = ylabel
	p.Legend.Top, p.Legend.Left = true, true
	p.X.Tick.Marker, p.Y.Tick.Marker = clientTicks(c.clients), plainTicks{}
	p.Add(plotter.NewGrid())
	var lines []any
	for si, s := range strategies {
		xys := make(plotter.XYs, len(c.clients))
		for ci, n := range c.clients {
			xys[ci] = plotter.XY{X: float64(n), Y: value(points[si*len(c.clients)+ci])}
		}
		lines = append(lines, s.name, xys)
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return nil, err
	}
	return p, nil
}

// plainTicks are the default ticks labelled as plain numbers ("2000", not
// "2000.00").
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ticks {
		if t.Label != "" {
			ticks[i].Label = strconv.FormatFloat(t.Value, 'f', -1, 64)
		}
	}
	return ticks
}

// clientTicks marks the first and last client counts and the multiples of 50
// between them.
func clientTicks(clients []int) plot.ConstantTicks {
	first, last := clients[0], clients[len(clients)-1]
	ticks := plot.ConstantTicks{{Value: float64(first), Label: strconv.Itoa(first)}}
	for n := (first/50 + 1) * 50; n < last; n += 50 {
		ticks = append(ticks, plot.Tick{Value: float64(n), Label: strconv.Itoa(n)})
	}
	return append(ticks, plot.Tick{Value: float64(last), Label: strconv.Itoa(last)})
}
