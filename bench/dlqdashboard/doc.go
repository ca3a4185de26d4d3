// Package dlqdashboard measures the dead letter dashboard on a big queue:
// with 100,000 letters in SQLite, the overview and a root cause's first
// page must each render in at most 500 ms. Their numbers come from the
// queue (dlq.Summarize: SQL aggregation; a group's page: an indexed query
// with LIMIT and OFFSET), and each benchmark runs beside the baseline of
// reading every letter, in the same run:
//
//	go test -run '^$' -bench . -benchtime 5x ./dlqdashboard
package dlqdashboard
