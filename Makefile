# The README's test commands.
#
# make quick: the root module's tests, without -race: the library's core.
#   About 45 s with a warm build cache on 2 cores (measured: 43 s wall, twice,
#   on the shared 2-core development machine at a load average of about 12,
#   2026-12-02). With an empty build cache (GOCACHE a new directory, so the
#   standard library is compiled too) it took 310 s wall at a load average of
#   about 10, for 249 s of CPU: on an idle 2-core machine, between about 125 s
#   and 250 s.
#
# make test: gofmt, .ci/check-modules (the modules require real, agreeing
#   versions of this repository's modules and do not import the root module's
#   internal packages), vet and the race-enabled tests in every module of the
#   workspace (go.work), then every test that skipped, with its reason (a
#   missing redis-server or PostgreSQL shows there), and the counts. Every
#   module runs even when an earlier one fails or a check does; the summary
#   names each failing module or check, and the target fails if any did.
#   About 13 minutes cold on 2 cores (.ci/run on a fresh clone with an empty
#   build cache and an empty module cache, redis-server, PostgreSQL and
#   Chromium installed: 758 s, 2026-12-02) and about 6 minutes warm (the same
#   with a warm build cache: 375 s; the root module alone, with
#   -race and a warm cache, took 193 s wall at a load average of 12, for 63 s
#   of CPU).
#
# CI (.ci/run) sets RETRY_REQUIRE_REDIS=1, RETRY_REQUIRE_REDIS_CLUSTER=1,
# RETRY_REQUIRE_POSTGRES=1 and RETRY_REQUIRE_BROWSER=1, which turn those skips
# into failures. Go 1.26 or newer for the workspace (the
# root module itself needs Go 1.25; grpc-go and OpenTelemetry need 1.26).
MODULES := $(shell go list -m -f '{{.Dir}}')

.PHONY: help quick test fmt bench fuzz

help:
	@echo "make quick   the root module's tests, no -race: ~45 s with a warm build cache on 2 cores,"
	@echo "             2-5 min with an empty one (it compiles the standard library too)"
	@echo "make test    gofmt, vet, -race tests in every module, then every skipped test and why:"
	@echo "             ~13 min cold (.ci/run, empty caches: 758 s on 2 cores), ~6 min warm"
	@echo "             (.ci/run on a fresh clone with a warm build cache: 375 s); the Makefile's"
	@echo "             opening comment says how each figure was measured"
	@echo "make fmt     gofmt -w every module"
	@echo "make bench   the root module's benchmarks; bench/README.md has the peers' and experiments"
	@echo "make fuzz    a short run of every fuzz target (FUZZTIME=$(FUZZTIME) each)"

quick:
	go test -count=1 ./...

# internal/testsummary runs each module's go test with -json, prints what
# plain go test prints, and records the skips; its exit status is go test's.
test:
	@failed=""; \
	tmp=$$(mktemp -d) || exit 1; \
	trap 'rm -rf "$$tmp"' EXIT; \
	go build -o $$tmp/testsummary ./internal/testsummary || exit 1; \
	unformatted=$$(gofmt -l $(MODULES)) || failed="gofmt"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; failed="gofmt"; fi; \
	bash .ci/check-modules || failed="$$failed check-modules"; \
	for dir in $(MODULES); do \
		echo "== $$dir"; \
		(cd $$dir && go vet ./... && $$tmp/testsummary -record $$tmp/skips go test -race -count=1 ./...) || failed="$$failed $$dir"; \
	done; \
	echo; \
	$$tmp/testsummary -report $$tmp/skips > $$tmp/report || failed="$$failed summary"; \
	if [ -n "$$failed" ]; then echo "FAILED:$$failed"; else echo "all modules passed"; fi; \
	cat $$tmp/report; \
	[ -z "$$failed" ]

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
