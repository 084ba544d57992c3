# netlock build, test, demo and benchmarks. See README.md.
GO      ?= go
BIN     := bin/netlock
PKGS    := ./...
# staticcheck, pinned (the module proxy refuses @latest); built on first use.
STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.6.1

.PHONY: all build install gen test test-real test-short demo bench vet lint fmt fuzz soak clean mininet mininet-rack mininet-deps

all: build

build:
	$(GO) build -o $(BIN) ./cmd/netlock

# Install netlock with go install: into $(go env GOBIN), or the first $(go env GOPATH)'s bin
# (~/go/bin) when GOBIN is unset. Says where, and whether that directory is in PATH.
install:
	$(GO) install ./cmd/netlock
	@dir=$$($(GO) env GOBIN); [ -n "$$dir" ] || { gp=$$($(GO) env GOPATH); dir=$${gp%%:*}/bin; }; \
	  echo "installed $$dir/netlock"; \
	  case ":$$PATH:" in *":$$dir:"*) ;; *) echo "$$dir is not in PATH: add it, or run $$dir/netlock";; esac

# Regenerate every generated Go pipeline (the engine's Go backend) after changing p4/netlock.p4 or
# the generator: p4/netlockgen (one pipeline of p4/netlock.p4, for every sizing) and the engine's
# test programs (bmv2/engine/gogentest). TestGeneratedUpToDate and gogentest's TestUpToDate fail
# while they are stale.
gen:
	$(GO) generate ./p4/netlockgen/... ./bmv2/engine/gogentest

# The whole test suite, race detector on, after the linters (CI runs this). Every pass runs
# through internal/testsum, which prints each package's result and the whole output of a failed
# test, and keeps every test's verdict in $(TESTLOG); the last line reports the tests that no pass
# ran (a skip under -race that a later pass runs is not one), and under CI=true fails on any of
# them but the opt-in measurements (a skip message with "opt-in": testenv.OptIn, testenv.RealTool).
TESTLOG := bin/test-verdicts.jsonl
TESTSUM := bin/testsum
test: lint
	@mkdir -p bin && rm -f $(TESTLOG) && $(GO) build -o $(TESTSUM) ./internal/testsum
	$(TESTSUM) run $(TESTLOG) -- $(GO) test -json -race -count=1 -timeout 20m $(PKGS)
	# Tests that skip under the race detector run without it: the allocation tests (sync.Pool drops
	# items at random under it), the soak through the switch and its mutant switch (the engine is
	# too slow under it; the rack tests run under it with half the clients, here at full size), the
	# large RMA-RW model checks (millions of states) and CITRON's schedule exploration.
	$(TESTSUM) run $(TESTLOG) -- $(GO) test -json -count=1 -timeout 10m -run 'Allocs|^TestSoakThroughSwitch$$|^TestSoakSwitchMutant$$|^TestRack(Migrations|Failures|NegativeControl)$$' $(PKGS)
	$(TESTSUM) run $(TESTLOG) -- $(GO) test -json -count=1 -timeout 10m -run '^TestExhaustive$$' ./rdma/rma/rwmodel
	$(TESTSUM) run $(TESTLOG) -- $(GO) test -json -count=1 -timeout 10m -run '^TestExplore' ./rdma/citron
	# The data plane's differential test at full count and its mutants (single-threaded; under
	# -race above they run a few sequences), and its passes per operation (measured without the
	# race detector).
	$(TESTSUM) run $(TESTLOG) -- $(GO) test -json -count=1 -timeout 10m -run 'Differential|^TestPassesPerOperation$$' ./p4/dataplane/dpengine
	# The rack model runs in one goroutine: under -race above its conservation and checker-agreement
	# tests run two phases and one, and the controller's tests one seed each and no negative
	# controls; here every phase, every seed and the negative controls.
	$(TESTSUM) run $(TESTLOG) -- $(GO) test -json -count=1 -timeout 10m -run '^(TestConservation|TestCheckerAgreesWithHistory|TestMigrationsUnderLoad|TestEvictions.*|TestControllerNegativeControls|TestSwitchRestart.*|TestServerDeath.*|TestControllerDeath|TestCrashedHolderSwept|TestFailoverOutlivesController)$$' ./testbed/rackmodel
	$(TESTSUM) report $(TESTLOG)

# The tests against the real P4 toolchain (p4c's p4test and p4c-bm2-ss, bmv2's simple_switch and
# simple_switch_grpc, the Tofino compiler p4c-barefoot): every TestReal* of the repository. They
# run when NETLOCK_P4TOOLS names the prefix the tools are built into (../shared/tools/p4tools/build.sh;
# this target sets it, default /opt/p4tools; docs/targets.md) and skip where it is unset or the tools
# are not there, also under CI: make test never runs them, even on a machine that has the tools.
NETLOCK_P4TOOLS ?= /opt/p4tools
# Exported for this target only: netlock refuses NETLOCK_* variables it does not know, so an export
# for every target broke the ones that run it (gen, demo, soak, bench).
test-real: export NETLOCK_P4TOOLS := $(NETLOCK_P4TOOLS)
test-real:
	$(GO) test -count=1 -timeout 90m -run '^TestReal' $(PKGS)

# The attacks of issue 18 against the built binaries (kill -9 and restart, a second server on an
# address, reflection, P4Runtime strangers, ...; docs/reliability.md, "Attacks"). make test runs
# them too.
attack:
	$(GO) test -count=1 -v ./testbed/attack

test-short:
	$(GO) test -short -count=1 $(PKGS)

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet $(PKGS)

lint: vet
	$(STATICCHECK) $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

# The whole rack on one machine, in one process, with the embedded default configuration:
# p4/netlock.p4 on the software switch, the controller over P4Runtime, two lock servers, client
# nodes (`netlock demo --help`; --loopback for servers and clients without a switch).
demo: build
	./$(BIN) demo

bench: build
	./$(BIN) bench all

# Two hosts on a netlock switch in Mininet (p4lang/tutorials style), with the Mininet CLI. Needs root.
mininet: build mininet-deps
	/usr/bin/python3 testbed/mininet/run.py --netlock $(CURDIR)/$(BIN)

# The rack as processes on Mininet hosts: netlock switch running p4/netlock.p4 on AF_PACKET ports,
# two netlock server, two netlock loadgen client nodes (testbed/mininet/rack.py). Needs root.
# SWITCH=bmv2: the same rack with bmv2's simple_switch_grpc as the ToR, running p4c-bm2-ss's JSON of
# p4/netlock.p4 from $(NETLOCK_P4TOOLS), the clients' histories merged and checked
# (TestRealMininetRack; docs/targets.md).
SWITCH ?= netlock
mininet-rack: export NETLOCK_P4TOOLS := $(NETLOCK_P4TOOLS)
mininet-rack: build mininet-deps
ifeq ($(SWITCH),bmv2)
	$(GO) test -count=1 -timeout 10m -v -run '^TestRealMininetRack$$' ./testbed/mininet
else
	/usr/bin/python3 testbed/mininet/rack.py --netlock $(CURDIR)/$(BIN)
endif

mininet-deps:
	@[ -x /usr/bin/mn ] && command -v ping >/dev/null && command -v ethtool >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mininet iputils-ping ethtool; }

# p4c's STF corpus through the Go backend (docs/p4.md, "Proofs of the Go backend"): each v1model
# sample the interpreter passes, generated, built in one temporary module and run on its generated
# pipeline. Opt-in: the samples are never committed; extract p4c's testdata/p4_16_samples first.
P4C_SAMPLES ?= /tmp/p4c/testdata/p4_16_samples
.PHONY: p4c-gogen
p4c-gogen:
	NETLOCK_P4C_SAMPLES=$(P4C_SAMPLES) $(GO) test ./bmv2/stf -run '^TestP4CCorpusGoBackend$$' -v -count=1 -timeout 30m

# Every fuzzer for FUZZTIME each (make fuzz FUZZTIME=10m to hunt); cmd/netlock's
# TestMakeFuzzListsEveryFuzzer fails when a func Fuzz of the repository is missing here. The
# fuzzers minimize each new interesting input, for a minute by default, which stalls them on P4
# programs: 10s is enough.
FUZZTIME ?= 30s
FUZZ := $(GO) test -run '^$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s -timeout 0
fuzz:
	$(FUZZ) ./wire -fuzz '^FuzzHeader$$'
	$(FUZZ) ./client/clientcore -fuzz '^FuzzReceive$$'
	$(FUZZ) ./lockserver/serverconfig -fuzz '^FuzzParseConfig$$'
	$(FUZZ) ./bmv2/front -fuzz '^FuzzFrontEnd$$'
	$(FUZZ) ./bmv2/engine -fuzz '^FuzzLoad$$'
	$(FUZZ) ./bmv2/engine -fuzz '^FuzzTokenEdits$$'
	$(FUZZ) ./bmv2/engine -fuzz '^FuzzProcess$$'
	$(FUZZ) ./bmv2/engine -fuzz '^FuzzBits$$'
	$(FUZZ) ./bmv2/stf -fuzz '^FuzzParse$$'
	$(FUZZ) ./bmv2/stf -fuzz '^FuzzRun$$'
	$(FUZZ) ./bmv2/p4rt -fuzz '^FuzzWriteValidation$$'
	$(FUZZ) ./alloc -fuzz '^FuzzStep$$'
	$(FUZZ) ./rdma/emu -fuzz '^FuzzRequestHeader$$'
	$(FUZZ) ./rdma/emu -fuzz '^FuzzResponseHeader$$'
	$(FUZZ) ./p4/dataplane -fuzz '^FuzzParseAdminReply$$'
	$(FUZZ) ./wire -fuzz '^FuzzParseLockStats$$'
	$(FUZZ) ./wire -fuzz '^FuzzBatch$$'
	$(FUZZ) ./internal/udpframe -fuzz '^FuzzParse$$'

# A million lock operations against the rack under 20% loss, duplication, reordering and delay,
# crashing holders and failovers, every one checked by package history (docs/reliability.md);
# through the switch a quarter of the locks live in it (overflow, queue-empty, push-back, sweeps),
# once on the interpreter (Tofino-constraint mode) and once on the generated pipeline (p4/netlockgen).
# Not part of make test, which runs the same soak with 20 000 operations.
SOAK_OPS ?= 1000000
soak:
	$(GO) test ./testbed/e2e -run '^TestSoak$$' -soak.ops $(SOAK_OPS) -soak.path servers -v -count=1 -timeout 0
	$(GO) test ./testbed/e2e -run '^TestSoak$$' -soak.ops $(SOAK_OPS) -soak.path switch -soak.switch-locks -soak.pipeline interp -v -count=1 -timeout 0
	$(GO) test ./testbed/e2e -run '^TestSoak$$' -soak.ops $(SOAK_OPS) -soak.path switch -soak.switch-locks -soak.pipeline gen -v -count=1 -timeout 0

clean:
	rm -rf bin
