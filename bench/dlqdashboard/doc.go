// Package dlqdashboard measures the dead letter dashboard on a big queue:
// with 100,000 letters in SQLite, the overview and a root cause's first
// page must each render in at most 500 ms. Their numbers come from the
// queue (dlq.Summarize: SQL aggregation; a group's page: an indexed query
// with LIMIT and OFFSET), and each benchmark runs beside the baseline of
// reading every letter, in the same run. BenchmarkRedisSummarize20k does
// the same for 20,000 letters in a redis-server the benchmark starts (it
// skips without one): the index against every record.
//
// Each reports the CPU time an op used (cpu-ms/op) beside the wall time:
// on a shared machine the wall time counts the others' work too.
//
//	go test -run '^$' -bench . -benchtime 5x ./dlqdashboard
package dlqdashboard
