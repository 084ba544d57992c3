# netlock build, test, demo and benchmarks. See README.md.
GO      ?= go
BIN     := bin/netlock
PKGS    := ./...
# staticcheck, pinned (the module proxy refuses @latest); built on first use.
STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.6.1

.PHONY: all build test test-short demo bench vet lint fmt fuzz clean mininet mininet-deps

all: build

build:
	$(GO) build -o $(BIN) ./cmd/netlock

# The whole test suite, race detector on, after the linters (CI runs this).
test: lint
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

test-short:
	$(GO) test -short -count=1 $(PKGS)

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet $(PKGS)

lint: vet
	$(STATICCHECK) $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

# The rack on one machine, on loopback, with the embedded default configuration.
demo: build
	./$(BIN) demo

bench: build
	./$(BIN) bench all

# Two hosts on a netlock switch in Mininet (p4lang/tutorials style), with the Mininet CLI. Needs root.
mininet: build mininet-deps
	/usr/bin/python3 testbed/mininet/run.py --netlock $(CURDIR)/$(BIN)

mininet-deps:
	@[ -x /usr/bin/mn ] && command -v ping >/dev/null && command -v ethtool >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mininet iputils-ping ethtool; }

fuzz:
	$(GO) test ./wire -run '^$$' -fuzz FuzzHeader -fuzztime 30s

clean:
	rm -rf bin
