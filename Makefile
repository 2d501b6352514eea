# awbridge: `make demo` runs the bridge against the built-in ActivityWatch
# simulator; `make test` runs the test suite (what CI runs).
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
BIN     := bin/awbridge

.PHONY: build demo test vet bench fuzz soak cross clean

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/awbridge

demo: build
	./$(BIN) demo --duration 30s

test: vet
	$(GO) test -count=1 -timeout 240s ./...

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./...

# Fuzz campaigns (outside CI): FUZZTIME per target.
FUZZTIME ?= 30s
fuzz:
	@$(GO) list ./... | while read pkg; do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# Soak (outside CI): 1,000,000 calls against one serve with RSS, heap and
# goroutines flat, and kill -9 during artifact and state writes in a loop
# (AWBRIDGE_SOAK_CALLS, AWBRIDGE_SOAK_KILLS, AWBRIDGE_SOAK_SEED tune it).
soak:
	AWBRIDGE_SOAK=1 $(GO) test -count=1 -run '^TestSoak' -timeout 60m -v ./cmd/awbridge

cross:
	GOOS=darwin GOARCH=arm64 $(GO) build -o /dev/null ./cmd/awbridge
	GOOS=windows GOARCH=amd64 $(GO) build -o /dev/null ./cmd/awbridge

clean:
	rm -rf bin
