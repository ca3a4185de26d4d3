module github.com/retrykit/retry/examples

go 1.25

require github.com/retrykit/retry v0.0.0

replace github.com/retrykit/retry => ../
