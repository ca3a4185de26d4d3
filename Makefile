# The README's test command is `make test`: gofmt, vet and the race-enabled
# tests in every module of the workspace (go.work).
MODULES := $(shell go list -m -f '{{.Dir}}')

.PHONY: test fmt bench fuzz

test:
	@unformatted=$$(gofmt -l $(MODULES)); if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	@set -e; for dir in $(MODULES); do \
		echo "== $$dir"; \
		(cd $$dir && go vet ./... && go test -race -count=1 ./...); \
	done

fmt:
	gofmt -w $(MODULES)

# In-package benchmarks of the hot path.
bench:
	go test -run '^$$' -bench . -benchmem ./...

# A short run of every fuzz target.
fuzz:
	go test -run '^$$' -fuzz FuzzParseRetryAfter -fuzztime 30s ./classify
