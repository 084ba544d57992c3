package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/controlplane/controller"
	"github.com/netlock-go/netlock/internal/tlsconf/tlstest"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/testbed/softrack"
)

// TestControllerCommand: the rack of testbed/softrack without its controller (the software switch
// running no program, two lock servers, client hosts) and the controller of `netlock
// controller`, run from the example testbed/rack.yaml through the command's own loading and
// run code (runController), with only the switch's P4Runtime address and the periods set as
// flags, and its admin socket on the rack's controller host. The controller pushes
// p4/netlock.p4, programs the switch, and moves the hot locks into it: its Prometheus endpoint
// reports moves in and locks in the switch, and most acquisitions that follow are granted by
// the switch (the servers' grant counters grow by less than half of them).
func TestControllerCommand(t *testing.T) {
	testControllerCommand(t, softrack.Config{NoController: true})
}

// TestControllerCommandFold: the same with the controller pushing p4/tna/netlock.p4's Tofino 1
// fold (--embedded tna-fold: two Pipelines, half a in pipe 0 and half b in pipe 1, bridged
// through port 196) to a switch of two pipes with ports 68 and 196 in loopback. Each of the
// fold's tables has a copy in each Pipeline, and the controller writes both (p4rtclient's
// TableUpdates): the lock table that half a reads and the one half b reads. Writing one copy
// (as the controller did before) leaves the other half without the locks, and the hot locks
// never get granted by the switch.
func TestControllerCommandFold(t *testing.T) {
	testControllerCommand(t, softrack.Config{NoController: true, Pipes: 2,
		Loopback: []int{dataplane.TNARecircPort, dataplane.TNARecircPortB}}, "--embedded", "tna-fold")
}

func testControllerCommand(t *testing.T, rc softrack.Config, flags ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := softrack.Start(ctx, rc)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	}()
	schema := controller.ConfigSchema()
	fs := pflag.NewFlagSet("controller", pflag.ContinueOnError)
	schema.AddFlags(fs)
	if err := fs.Parse(append([]string{"--switch", r.GRPCAddr(), "--alloc-period", "200ms", "--metrics-listen", "127.0.0.1:0"}, flags...)); err != nil {
		t.Fatal(err)
	}
	v, err := schema.Load("../../testbed/rack.yaml", fs)
	if err != nil {
		t.Fatal(err)
	}
	fc, err := controller.ConfigFromValues(v)
	if err != nil {
		t.Fatal(err)
	}
	fc.LogLevel = "error"
	conn, err := r.ControllerHost().ListenUDP(0)
	if err != nil {
		t.Fatal(err)
	}
	metrics := make(chan net.Addr, 1)
	cctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- runController(cctx, fc, controllerIO{conn: conn, ready: func(_ *controller.Controller, m net.Addr) { metrics <- m }})
	}()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("the controller ended with %v", err)
		}
	}()
	var maddr net.Addr
	select {
	case maddr = <-metrics:
	case err := <-done:
		t.Fatalf("the controller ended: %v", err)
	}

	clients, err := r.NewClients(4, client.Config{RetryInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clients {
		defer c.Close()
	}
	run := func(d time.Duration) uint64 {
		n, err := softrack.HotLoad(ctx, clients, d)
		if err != nil {
			t.Error(err)
		}
		return n
	}
	// Load until the controller reports the four hot locks in the switch (a hang guard, not a
	// timing assertion).
	for deadline := time.Now().Add(90 * time.Second); ; {
		run(200 * time.Millisecond)
		m, err := scrape(ctx, maddr)
		if err != nil {
			t.Fatal(err)
		}
		if m[`netlock_controller_switch_locks`] >= 4 && m[`netlock_controller_moves_total{kind="in"}`] >= 4 &&
			m[`netlock_controller_primary`] == 1 {
			t.Logf("metrics: switch locks %v, moves in %v", m[`netlock_controller_switch_locks`], m[`netlock_controller_moves_total{kind="in"}`])
			break
		}
		if time.Now().After(deadline) || t.Failed() {
			t.Fatalf("the hot locks did not move into the switch; metrics %v", m)
		}
	}
	var before uint64
	for _, s := range r.Servers() {
		before += s.Stats().Grants
	}
	n := run(time.Second)
	var after uint64
	for _, s := range r.Servers() {
		after += s.Stats().Grants
	}
	t.Logf("%d acquisitions, %d of them granted by the servers", n, after-before)
	if n == 0 || after-before >= n/2 {
		t.Errorf("%d acquisitions, %d granted by the servers: the switch should grant most", n, after-before)
	}
}

// scrape reads the Prometheus text exposition at addr: series (name with labels) -> value.
func scrape(ctx context.Context, addr net.Addr) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr.String()+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics line %q: %w", line, err)
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

// TestControllerConfigStrict: `netlock controller --config f.yaml` with an unknown key, a wrong
// type or a nonsensical value exits non-zero before it connects to anything, with a message
// naming the key and the file.
func TestControllerConfigStrict(t *testing.T) {
	dir := t.TempDir()
	example, err := os.ReadFile("../../testbed/rack.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file string
		want       string
	}{
		{name: "typo", file: "alloc:\n  perod: 1s\n", want: "unknown key alloc.perod (did you mean alloc.period?)"},
		{name: "wrong type", file: "dead_after: many\n", want: "key dead_after"},
		{name: "duration without unit", file: "sweep_period: 100\n", want: "key sweep_period"},
		{name: "server typo", file: "servers:\n  1: {adr: \"10.0.1.1:8888\", port: 101, mac: \"02:00:0a:00:01:01\"}\n",
			want: "key servers.1: unknown key adr"},
		{name: "server bad mac", file: "servers:\n  1: {addr: \"10.0.1.1:8888\", port: 101, mac: \"nope\"}\n",
			want: "key servers.1.mac"},
		// A key the file leaves out is named with where its value came from: the default.
		{name: "no servers", file: "switch: {ip: 10.0.0.1}\nrack_key: \"006e65746c6f636b\"\n", want: "default: key servers: no lock servers"},
		{name: "max below default", file: "lease: {default: 30s, max: 10s}\n", want: "key lease.max: 10s is below lease.default 30s"},
		{name: "pipeline without p4info", file: "pipeline:\n  device_config: device_config.pb.bin\n", want: "key pipeline.device_config: needs pipeline.p4info too"},
		{name: "program and pipeline", file: "program: ../../p4/tna/netlock.p4\npipeline: {device_config: d.bin, p4info: p.txt}\n",
			want: "key pipeline.device_config: give program or a compiled pipeline, not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".yaml")
			body := tc.file
			if tc.name != "no servers" {
				// The example with the bad sections in place of its own: everything else is
				// valid, so the error can only be the bad key's.
				body = merge(string(example), tc.file)
			}
			if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			// A controller that accepted the file would run until killed: that is a failure too.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "controller", "--config", f, "--switch", "127.0.0.1:1")
			cmd.Env = append(os.Environ(), "NETLOCK_TEST_RUN_MAIN=1")
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("netlock controller accepted the config and ran until killed; output:\n%s", out)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() == 0 {
				t.Fatalf("netlock controller exited with %v, want a non-zero status; output:\n%s", err, out)
			}
			if !strings.Contains(string(out), tc.want) || (tc.name != "no servers" && !strings.Contains(string(out), f)) {
				t.Fatalf("output does not name the key (%q) and the file %s:\n%s", tc.want, f, out)
			}
		})
	}
}

// merge replaces the example's top-level sections that bad sets with bad's (top-level keys of
// bad start a line without indentation).
func merge(example, bad string) string {
	tops := map[string]bool{}
	for _, l := range strings.Split(bad, "\n") {
		if l != "" && l[0] != ' ' {
			tops[strings.SplitN(l, ":", 2)[0]] = true
		}
	}
	var out []string
	skip := false
	for _, l := range strings.Split(example, "\n") {
		if l != "" && l[0] != ' ' && l[0] != '#' {
			skip = tops[strings.SplitN(l, ":", 2)[0]]
		}
		if !skip {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n") + "\n" + bad
}

// TestControllerTLSKeys: the controller's switch.tls keys build its TLS configuration; a client
// certificate without the CA is refused with a message naming the key.
func TestControllerTLSKeys(t *testing.T) {
	p := tlstest.NewPKI(t)
	load := func(args ...string) (controller.FileConfig, error) {
		schema := controller.ConfigSchema()
		fs := pflag.NewFlagSet("controller", pflag.ContinueOnError)
		schema.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		v, err := schema.Load("../../testbed/rack.yaml", fs)
		if err != nil {
			t.Fatal(err)
		}
		return controller.ConfigFromValues(v)
	}
	fc, err := load("--switch-tls-ca", p.CA, "--switch-tls-cert", p.ClientCert, "--switch-tls-key", p.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	if fc.Switch.TLS == nil || len(fc.Switch.TLS.Certificates) != 1 || fc.Switch.TLS.RootCAs == nil {
		t.Fatalf("TLS config %+v: want the CA and one client certificate", fc.Switch.TLS)
	}
	if _, err := load("--switch-tls-cert", p.ClientCert, "--switch-tls-key", p.ClientKey); err == nil ||
		!strings.Contains(err.Error(), "switch.tls.ca") {
		t.Fatalf("a client certificate without the CA: %v, want an error naming switch.tls.ca", err)
	}
	if fc, err := load(); err != nil || fc.Switch.TLS != nil {
		t.Fatalf("no TLS keys: TLS %v, err %v; want plaintext", fc.Switch.TLS, err)
	}
}

// TestControllerMetricsFlagNames: the controller's metrics address is --metrics-listen
// (metrics_listen), as netlock server's is; the former --metrics-addr and metrics_addr still set
// it, with a warning the command logs.
func TestControllerMetricsFlagNames(t *testing.T) {
	for _, c := range []struct {
		args    []string
		file    string
		warning string
	}{
		{args: []string{"--metrics-listen", "127.0.0.1:9103"}},
		{args: []string{"--metrics-addr", "127.0.0.1:9103"}, warning: "flag --metrics-addr is deprecated: use flag --metrics-listen"},
		{file: "metrics_addr: 127.0.0.1:9103\n", warning: "key metrics_addr is deprecated: use key metrics_listen"},
	} {
		schema := controller.ConfigSchema()
		fs := pflag.NewFlagSet("controller", pflag.ContinueOnError)
		schema.AddFlags(fs)
		if err := fs.Parse(append([]string{"--switch", "127.0.0.1:1"}, c.args...)); err != nil {
			t.Fatal(err)
		}
		rack, err := os.ReadFile("../../testbed/rack.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if c.file != "" {
			rack = regexp.MustCompile(`(?m)^metrics_listen:.*\n`).ReplaceAll(rack, []byte(c.file))
		}
		file := filepath.Join(t.TempDir(), "rack.yaml")
		if err := os.WriteFile(file, rack, 0o600); err != nil {
			t.Fatal(err)
		}
		v, err := schema.Load(file, fs)
		if err != nil {
			t.Fatalf("%v %q: %v", c.args, c.file, err)
		}
		fc, err := controller.ConfigFromValues(v)
		if err != nil {
			t.Fatal(err)
		}
		w := strings.Join(fc.Warnings, "\n")
		if fc.MetricsListen != "127.0.0.1:9103" || (c.warning == "") != (w == "") || !strings.Contains(w, c.warning) {
			t.Errorf("%v %q: metrics on %q, warnings %q; want 127.0.0.1:9103 and %q", c.args, c.file, fc.MetricsListen,
				w, c.warning)
		}
	}
}

// TestControllerSizeEveryLevel: alloc.size_every_level reaches the controller core's
// SizeEveryLevel; it is off by default.
func TestControllerSizeEveryLevel(t *testing.T) {
	rack, err := os.ReadFile("../../testbed/rack.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, on := range []bool{false, true} {
		file := rack
		if on {
			file = regexp.MustCompile(`(?m)^  size_every_level: false`).ReplaceAll(rack, []byte("  size_every_level: true"))
		}
		fc, err := controller.ParseConfig(file, "yaml")
		if err != nil {
			t.Fatal(err)
		}
		if fc.Core.SizeEveryLevel != on {
			t.Errorf("size_every_level %v: the core's SizeEveryLevel is %v", on, fc.Core.SizeEveryLevel)
		}
	}
}
