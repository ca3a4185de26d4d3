package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
)

func write(dir string, rows []row) error {
	f, err := os.Create(filepath.Join(dir, "results.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"model", "workload", "strategy", "hedge_delay_ms", "p50_ms", "p99_ms", "p999_ms", "extra_requests_pct"})
	for _, r := range rows {
		_ = w.Write([]string{r.model, r.workload, r.strategy, num(r.delayMS), num(r.p50), num(r.p99), num(r.p999), num(r.extraPct)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return writePlot(filepath.Join(dir, "tail.png"), rows)
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
