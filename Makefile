# The README's test command is `make test`: gofmt, .ci/check-modules (the
# modules require real, agreeing versions of this repository's modules and do
# not import the root module's internal packages), vet and the race-enabled
# tests in every module of the workspace (go.work). Every module runs even
# when an earlier one fails or a check does; the summary names each failing
# module or check, and the target fails if any did.
MODULES := $(shell go list -m -f '{{.Dir}}')

.PHONY: test fmt bench fuzz

test:
	@failed=""; \
	unformatted=$$(gofmt -l $(MODULES)); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; failed="gofmt"; fi; \
	bash .ci/check-modules || failed="$$failed check-modules"; \
	for dir in $(MODULES); do \
		echo "== $$dir"; \
		(cd $$dir && go vet ./... && go test -race -count=1 ./...) || failed="$$failed $$dir"; \
	done; \
	if [ -n "$$failed" ]; then echo "FAILED:$$failed"; exit 1; fi; \
	echo "all modules passed"

fmt:
	gofmt -w $(MODULES)

# In-package benchmarks of the hot path.
bench:
	go test -run '^$$' -bench . -benchmem ./...

# A short run of every fuzz target (FUZZTIME each).
FUZZTIME ?= 20s
fuzz:
	go test -run '^$$' -fuzz FuzzParseRetryAfter -fuzztime $(FUZZTIME) ./classify
	go test -run '^$$' -fuzz FuzzSSE -fuzztime $(FUZZTIME) ./httpretry
	go test -run '^$$' -fuzz FuzzDecode -fuzztime $(FUZZTIME) ./dlq
	cd grpcretry && go test -run '^$$' -fuzz FuzzPushback -fuzztime $(FUZZTIME) .
	for f in FuzzRecordUnmarshalBinary FuzzDecodeResponse FuzzKeyOf FuzzDeriveKey FuzzProblemKind; do \
		go test -run '^$$' -fuzz $$f -fuzztime $(FUZZTIME) ./idempotency || exit 1; \
	done
