package main

import (
	"fmt"
	"image/color"
	"os"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// plotted are the rows drawn, a line each with the first seed's run, in
// this order: those that keep serving the load first, so that no retries,
// in black, lies on top where every row serves it. The rows left out draw
// the same line as one of these: gRPC's throttling and AWS's quota, shared,
// that of no retries.
var plotted = []struct {
	name, scope string
	color       color.RGBA
	dashed      bool
	width       vg.Length
}{
	{"retry-fleet", perClt, color.RGBA{0, 160, 60, 255}, false, 2.5},
	{"retry-ratio", shared, color.RGBA{140, 0, 180, 255}, true, 1.5},
	{"retry-default", perClt, color.RGBA{110, 170, 255, 255}, true, 1.5},
	{"retry-default", shared, color.RGBA{0, 90, 220, 255}, false, 2.5},
	{"no-retries", noScope, color.RGBA{0, 0, 0, 255}, false, 1},
	{"retryablehttp", noScope, color.RGBA{230, 120, 0, 255}, false, 1},
	{"cenkalti-v4", noScope, color.RGBA{150, 80, 30, 255}, true, 1},
	{"avast-v5", noScope, color.RGBA{200, 0, 0, 255}, true, 1},
}

// plotUntil is the end of the time axis: every difference between the rows
// is over by then (a run lasts 240 s).
const plotUntil = 150 * time.Second

// writePlot draws goodput over time under each trigger, a panel per
// trigger and load, a line per plotted row, and writes them as a PNG.
func writePlot(path string, cells []cell, c config) error {
	var panels [][]*plot.Plot
	for i, sc := range triggers {
		p, err := panel(cells, c, sc)
		if err != nil {
			return err
		}
		if i%2 == 0 {
			panels = append(panels, nil)
		}
		panels[len(panels)-1] = append(panels[len(panels)-1], p)
	}
	img := vgimg.NewWith(vgimg.UseWH(30*vg.Centimeter, 26*vg.Centimeter), vgimg.UseDPI(110))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(panels), Cols: 2, PadX: vg.Centimeter, PadY: vg.Centimeter, PadTop: 2 * vg.Millimeter,
		PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	canvases := plot.Align(panels, tiles, dc)
	for i := range panels {
		for j := range panels[i] {
			panels[i][j].Draw(canvases[i][j])
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

// panel is one trigger: goodput a second against time, a line per plotted
// row that ran.
func panel(cells []cell, c config, sc scenario) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s 30–40 s, λ = %.0f/s (seed %d)", sc.trig, sc.lambda, c.seeds[0])
	p.X.Min, p.X.Max = 0, plotUntil.Seconds()
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "goodput (answers in time per s)"
	p.Y.Min, p.Y.Max = 0, 2100 // the legend above the lines
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = 9
	p.Add(plotter.NewGrid())
	for _, want := range plotted {
		for _, cl := range cells {
			if cl.row.name != want.name || cl.row.scope != want.scope || cl.sc != sc || cl.seed != c.seeds[0] {
				continue
			}
			xys := make(plotter.XYs, int(plotUntil/time.Second))
			for i, g := range cl.goodput[:len(xys)] {
				xys[i] = plotter.XY{X: float64(i), Y: g}
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, err
			}
			l.Color, l.Width = want.color, want.width
			if want.dashed {
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
			}
			p.Add(l)
			name := want.name
			if want.scope != noScope {
				name += " " + want.scope
			}
			p.Legend.Add(name, l)
		}
	}
	return p, nil
}
