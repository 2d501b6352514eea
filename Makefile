# awbridge: `make demo` runs the bridge against the built-in ActivityWatch
# simulator; `make test` runs the test suite (what CI runs).
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
BIN     := bin/awbridge
# A static binary on Linux: the DNS resolver and the account lookups
# awbridge needs have pure-Go forms, so nothing links libc (macOS binaries
# always call libSystem; Windows has no libc to link). The tests build and
# run the binary the same way. CGO_ENABLED=1 make ... links libc again.
export CGO_ENABLED ?= 0

.PHONY: build demo test vet bench fuzz soak cross clean conformance release bundle

# goreleaser v2 builds the release; `go run` fetches it when it is not
# installed (GORELEASER=goreleaser uses the one on PATH).
GORELEASER ?= $(GO) run github.com/goreleaser/goreleaser/v2@v2.15.1

build:
	$(GO) build -trimpath -buildvcs=auto -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/awbridge

# The official MCP bundle tool is packaging/mcpb's pinned one; MCPB=... runs another.
MCPB_FLAG = $(if $(MCPB),-mcpb '$(MCPB)')
COMMIT_ENV = COMMIT=$$(git rev-parse --short=12 HEAD) COMMIT_DATE=$$(git log -1 --format=%cI) \
	  COMMIT_TIMESTAMP=$$(git log -1 --format=%ct) SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct)

# A snapshot of every release artifact into dist/ (nothing is published):
# goreleaser's archives and packages, then the Claude Desktop bundles and
# the MCP Registry's server.json (packaging/mcpb). One build at a time: the
# macOS universal binary stacks its two halves in the order they finished.
release:
	$(COMMIT_ENV) $(GORELEASER) release --snapshot --clean --parallelism 1
	$(COMMIT_ENV) $(GO) run ./packaging/mcpb -dist dist $(MCPB_FLAG)

# The Linux bundle and its server.json alone, into dist/bundle (what CI checks).
bundle:
	rm -rf dist/bundle
	for arch in amd64 arm64; do GOOS=linux GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' \
	  -o dist/bundle/awbridge_linux_$$arch/awbridge ./cmd/awbridge || exit 1; done
	$(COMMIT_ENV) $(GO) run ./packaging/mcpb -dist dist/bundle -os linux \
	  -version 0.0.0-dev+$$(git rev-parse --short=12 HEAD) $(MCPB_FLAG)

demo: build
	./$(BIN) demo --duration 30s

test: vet
	$(GO) test -count=1 -timeout 240s ./...
	cd packaging/linux && $(GO) vet ./... && $(GO) test -count=1 ./...

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./...

# Fuzz campaigns (outside CI): FUZZTIME per target, one target at a time;
# FUZZPKGS and FUZZ (a regexp of target names) narrow them, FUZZPARALLEL
# sets the workers (default: one per CPU), FUZZMINTIME bounds shrinking a
# new input (executions spent shrinking are not counted). One line per
# target: ok, FAIL or race, executions and new interesting inputs. A
# crasher is written to the package's testdata/fuzz/<target>/ (keep it: it
# is a regression test) and named below its line. "race" is a bare
# "context deadline exceeded" at the end with no input written: Go's
# coordinator race (golang/go#75804, fixed in Go 1.27), not a finding.
# Every target runs; the exit status says whether one failed.
FUZZTIME     ?= 30s
FUZZPKGS     ?= ./...
FUZZ         ?= .
FUZZPARALLEL ?=
FUZZMINTIME  ?= 10s
fuzz:
	@log=$$(mktemp); failed=0; flaked=0; \
	for pkg in $$($(GO) list $(FUZZPKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' | grep -E '$(FUZZ)'); do \
	    if $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) $(if $(FUZZPARALLEL),-parallel $(FUZZPARALLEL)) $$pkg >$$log 2>&1; \
	    then res=ok; \
	    elif grep -q 'context deadline exceeded' $$log && ! grep -q 'Failing input written' $$log; \
	    then res=race; flaked=$$((flaked+1)); \
	    else res=FAIL; failed=$$((failed+1)); fi; \
	    stats=$$(grep -o 'execs: [0-9]*.*new interesting: [0-9]* (total: [0-9]*)' $$log | tail -1 | sed 's| ([0-9]*/sec)||'); \
	    printf '%-4s %-24s %-22s %s\n' $$res $${pkg#github.com/awbridge/awbridge/} $$f "$$stats"; \
	    if [ $$res = FAIL ]; then grep -E -- '--- FAIL|_test.go:|Failing input|panic:|hung' $$log | head -6 | cut -c1-160 | sed 's/^/     /'; fi; \
	  done; \
	done; rm -f $$log; \
	if [ $$flaked -gt 0 ]; then echo "$$flaked target(s) ended with Go's fuzztime race (golang/go#75804: no input failed)"; fi; \
	if [ $$failed -gt 0 ]; then echo "$$failed fuzz target(s) failed"; exit 1; fi

# Soak (outside CI): 1,000,000 calls against one serve with RSS, heap and
# goroutines flat, and kill -9 during artifact and state writes in a loop
# (AWBRIDGE_SOAK_CALLS, AWBRIDGE_SOAK_KILLS, AWBRIDGE_SOAK_SEED tune it).
soak:
	AWBRIDGE_SOAK=1 $(GO) test -count=1 -run '^TestSoak' -timeout 60m -v ./cmd/awbridge

# The official MCP conformance suite (outside CI), both requirement sets (2026-07-28 and
# 2025-11-25) against a token-less loopback `serve` on the simulator; fails on a failing
# check testdata/conformance/baseline-<set>.txt does not name. Node 22 and the suite
# (pinned in scripts/conformance/package-lock.json) come from the npm registry into
# ~/.cache/awbridge-conformance once; results land in bin/conformance.
conformance: build
	scripts/conformance/run.sh $(BIN)

cross:
	GOOS=darwin GOARCH=arm64 $(GO) build -o /dev/null ./cmd/awbridge
	GOOS=windows GOARCH=amd64 $(GO) build -o /dev/null ./cmd/awbridge

clean:
	rm -rf bin
