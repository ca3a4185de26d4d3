package main

import (
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// writePlot draws the share of calls throttled and the goodput against the
// number of clients (log scale), a line per strategy and scope, side by
// side, and writes them as a PNG.
func writePlot(path string, rows []row, c config) error {
	thr, err := panel(rows, c, "Calls throttled (429)", "% of calls", func(r row) float64 { return r.throttledPct })
	if err != nil {
		return err
	}
	good, err := panel(rows, c, "Goodput", "% of the limit (100 rps)", func(r row) float64 { return r.goodputPct })
	if err != nil {
		return err
	}
	good.Y.Min, good.Y.Max = 0, 170 // room for the legend above the lines
	thr.Y.Min, thr.Y.Max = 0, 100
	img := vgimg.NewWith(vgimg.UseWH(26*vg.Centimeter, 11*vg.Centimeter), vgimg.UseDPI(120))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Centimeter, PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter,
		PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	canvases := plot.Align([][]*plot.Plot{{thr, good}}, tiles, dc)
	thr.Draw(canvases[0][0])
	good.Draw(canvases[0][1])
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

// panel is one graph: value against clients, a line with points per
// strategy and scope.
func panel(rows []row, c config, title, ylabel string, value func(row) float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "clients (log scale)"
	p.Y.Label.Text = ylabel
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = clientTicks(c.clients)
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	var lines []any
	for si, s := range strategies {
		xys := make(plotter.XYs, len(c.clients))
		for ci, n := range c.clients {
			xys[ci] = plotter.XY{X: float64(n), Y: value(rows[si*len(c.clients)+ci])}
		}
		name := s.name
		if s.scope != "-" {
			name += " " + s.scope
		}
		lines = append(lines, name, xys)
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return nil, err
	}
	return p, nil
}

func clientTicks(clients []int) plot.ConstantTicks {
	var ticks plot.ConstantTicks
	for _, n := range clients {
		ticks = append(ticks, plot.Tick{Value: float64(n), Label: strconv.Itoa(n)})
	}
	return ticks
}
