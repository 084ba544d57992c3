package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets a test run the netlock command itself: with NETLOCK_TEST_RUN_MAIN=1 the test
// binary is the netlock binary (main runs and exits), so exit codes and stderr are the real ones.
func TestMain(m *testing.M) {
	if os.Getenv("NETLOCK_TEST_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestServerConfigStrict: `netlock server --config f.yaml` with an unknown key, a wrong type or
// a nonsensical value exits non-zero with a message naming the key and the file (it used to start
// with the defaults).
func TestServerConfigStrict(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, file string
		env        []string
		args       []string
		want       string
	}{
		{name: "typo", file: "lese: 10s\n", want: "unknown key lese (did you mean lease?)"},
		{name: "wrong type", file: "lease: \"abc\"\n", want: "key lease: want a section with lease.default, lease.max"},
		{name: "wrong type inside", file: "lease: {default: abc}\n", want: `key lease.default: "abc" is not a duration`},
		{name: "zero lease", file: "lease: {default: 0s}\n", want: "key lease.default: 0s: a lease must be at least 1µs"},
		{name: "max below default", file: "lease: {default: 30s, max: 10s}\n", want: "key lease.max: 10s is below lease.default 30s"},
		{name: "environment", file: "shards: 2\n", env: []string{"NETLOCK_MAX_WAITERS=-4"},
			want: "environment NETLOCK_MAX_WAITERS: key max_waiters: -4: must be in -1..16777216"},
		{name: "environment typo", file: "shards: 2\n", env: []string{"NETLOCK_LEASE_DEFUALT=1s"},
			want: "environment NETLOCK_LEASE_DEFUALT: unknown variable (did you mean NETLOCK_LEASE_DEFAULT?)"},
		{name: "environment plural", file: "shards: 2\n", env: []string{"NETLOCK_SHARDZ=3"},
			want: "environment NETLOCK_SHARDZ: unknown variable (did you mean NETLOCK_SHARDS?)"},
		{name: "environment wrong type", file: "shards: 2\n", env: []string{"NETLOCK_SHARDS=many"},
			want: "environment NETLOCK_SHARDS: key shards:"},
		{name: "environment wrong duration", file: "shards: 2\n", env: []string{"NETLOCK_LEASE_DEFAULT=10"},
			want: "environment NETLOCK_LEASE_DEFAULT: key lease.default:"},
		{name: "rdma mode without rdma", file: "shards: 2\n", args: []string{"--rdma-mode", "rw"},
			want: "flag --rdma-mode: key rdma.mode: has no effect without rdma.enabled (--rdma)"},
		{name: "rdma locks without rdma", file: "shards: 2\n", args: []string{"--rdma-locks", "8"},
			want: "flag --rdma-locks: key rdma.locks: has no effect without rdma.enabled (--rdma)"},
		{name: "rdma node without rdma", file: "shards: 2\n", args: []string{"--rdma-node", "10.0.0.1"},
			want: "flag --rdma-node: key peers.rdma_nodes: has no effect without rdma.enabled (--rdma)"},
		{name: "rdma in file without rdma", file: "rdma: {mode: rw}\n",
			want: "key rdma.mode: has no effect without rdma.enabled (--rdma)"},
		{name: "rdma in environment without rdma", file: "shards: 2\n", env: []string{"NETLOCK_RDMA_TR=5"},
			want: "environment NETLOCK_RDMA_TR: key rdma.tr: has no effect without rdma.enabled (--rdma)"},
		{name: "rw parameter with alock", file: "shards: 2\n", args: []string{"--rdma", "--rdma-counters", "4"},
			want: "flag --rdma-counters: key rdma.counters: is a parameter of rdma.mode rw (--rdma-mode rw), not of rdma.mode alock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".yaml")
			if err := os.WriteFile(f, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			// A server that accepted the file would serve until killed: that is a failure too.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"server", "--config", f, "--listen", "127.0.0.1:0",
				"--state-file", filepath.Join(dir, "s.state"), "--init"}, tc.args...)...)
			cmd.Env = append(append(os.Environ(), "NETLOCK_TEST_RUN_MAIN=1"), tc.env...)
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("netlock server accepted the config and ran until killed; output:\n%s", out)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() == 0 {
				t.Fatalf("netlock server exited with %v, want a non-zero status; output:\n%s", err, out)
			}
			msg := string(out)
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("output %q lacks %q", msg, tc.want)
			}
			if tc.env == nil && tc.args == nil && !strings.Contains(msg, "config file "+f) {
				t.Fatalf("output %q does not name the file %s", msg, f)
			}
		})
	}
}

// TestCommandsRefuseUnknownEnv: every netlock command refuses a NETLOCK_ variable that no
// command knows; a server key's variable or a test knob is accepted.
func TestCommandsRefuseUnknownEnv(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"PATH=/bin", "NETLOCK_SHARDZ=3"}, "environment NETLOCK_SHARDZ: unknown variable (did you mean NETLOCK_SHARDS?)"},
		{[]string{"NETLOCK_LEASE_DEFUALT=1s"}, "environment NETLOCK_LEASE_DEFUALT: unknown variable (did you mean NETLOCK_LEASE_DEFAULT?)"},
		{[]string{"NETLOCK_SHARDS=3", "NETLOCK_SEED=4", "NETLOCK_TEST_RUN_MAIN=1", "HOME=/"}, ""},
		// A controller key's variable is known too (one shell may configure both commands).
		{[]string{"NETLOCK_ALLOC_PERIOD=500ms", "NETLOCK_SHARDS=3"}, ""},
		{[]string{"NETLOCK_ALLOC_PERIUD=500ms"}, "environment NETLOCK_ALLOC_PERIUD: unknown variable (did you mean NETLOCK_ALLOC_PERIOD?)"},
	} {
		err := checkEnv(tc.env)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("checkEnv(%v): %v", tc.env, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("checkEnv(%v) = %v, want %q", tc.env, err, tc.want)
		}
	}
	// Through the binary, for commands that read no configuration: demo and p4 check.
	for _, args := range [][]string{{"demo", "--duration", "1ms"}, {"p4", "check", "p4/netlock.p4"}, {"bench", "core"}, {"switch", "--no-p4", "--grpc-server-addr", "127.0.0.1:0"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, os.Args[0], args...)
		cmd.Env = append(os.Environ(), "NETLOCK_TEST_RUN_MAIN=1", "NETLOCK_SHARDZ=3")
		out, err := cmd.CombinedOutput()
		cancel()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 0 || !strings.Contains(string(out), "NETLOCK_SHARDZ") {
			t.Errorf("netlock %v with NETLOCK_SHARDZ: %v, output %q; want a non-zero exit naming it", args, err, out)
		}
	}
}
