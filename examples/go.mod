module github.com/retrykit/retry/examples

go 1.25

require github.com/retrykit/retry v0.0.0

require github.com/sony/gobreaker/v2 v2.4.0 // indirect

replace github.com/retrykit/retry => ../
