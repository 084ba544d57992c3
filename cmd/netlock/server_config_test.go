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
		want       string
	}{
		{name: "typo", file: "lese: 10s\n", want: "unknown key lese (did you mean lease?)"},
		{name: "wrong type", file: "lease: \"abc\"\n", want: "key lease: want a section with lease.default, lease.max"},
		{name: "wrong type inside", file: "lease: {default: abc}\n", want: `key lease.default: "abc" is not a duration`},
		{name: "zero lease", file: "lease: {default: 0s}\n", want: "key lease.default: 0s: a lease must be at least 1µs"},
		{name: "max below default", file: "lease: {default: 30s, max: 10s}\n", want: "key lease.max: 10s is below lease.default 30s"},
		{name: "environment", file: "shards: 2\n", env: []string{"NETLOCK_MAX_WAITERS=-4"},
			want: "environment NETLOCK_MAX_WAITERS: key max_waiters: -4: must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".yaml")
			if err := os.WriteFile(f, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			// A server that accepted the file would serve until killed: that is a failure too.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "server", "--config", f, "--listen", "127.0.0.1:0",
				"--state-file", filepath.Join(dir, "s.state"))
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
			if tc.env == nil && !strings.Contains(msg, "config file "+f) {
				t.Fatalf("output %q does not name the file %s", msg, f)
			}
		})
	}
}
