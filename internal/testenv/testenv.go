// Package testenv decides what a test does when the machine lacks something the test needs: a
// tool (tshark, redis-server, Mininet, ping, ethtool), a privilege (root for AF_PACKET sockets and
// network namespaces) or a working piece of the operating system (a network namespace that cannot
// be created).
//
// The rule, for every test of the repository:
//
//   - under CI (the environment variable CI is true, as .ci/run sets it) the test FAILS, and the
//     message names what is missing and how to install it: CI installs everything the tests use,
//     so a missing tool there is a broken CI set-up, and a skip would hide it;
//   - elsewhere the test is SKIPPED, and the skip message says why and how to install what is
//     missing.
//
// A test that needs the netlock binary builds it ([BuildNetlock]) instead of looking for one.
//
// The only skips that do not go through this rule are [OptIn] (measurements that read data from
// outside the repository, such as a p4c checkout, and run only when asked for), testing.Short
// and the re-executed helper processes of multi-process tests.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TB is the part of [testing.TB] this package uses; tests of the package pass a recorder.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

var _ TB = testing.TB(nil)

// InCI reports whether the tests run under CI: the environment variable CI holds a true value
// (strconv.ParseBool: "true", "1", "TRUE", ...).
func InCI() bool {
	ci, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && ci
}

// Missing stops the test because what is missing: under CI it fails, elsewhere it skips. install
// says how to get it (a command, or a sentence); it may be empty.
func Missing(t TB, what, install string) {
	t.Helper()
	msg := what + " is missing"
	if install != "" {
		msg += "; install it with: " + install
	}
	Unavailable(t, "%s", msg)
}

// Unavailable stops the test because the machine cannot give it what it needs (the message says
// what): under CI it fails, elsewhere it skips.
func Unavailable(t TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("CI=true and this test cannot run: %s", msg)
		return
	}
	t.Skipf("skipped (set CI=true to make this a failure): %s", msg)
}

// RequireTool returns the path of the command name, or stops the test ([Missing]) when it is not on
// PATH. A name with a slash is looked up as a file.
func RequireTool(t TB, name, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name, install)
		return ""
	}
	return path
}

// RequireRoot stops the test ([Unavailable]) unless it runs as root; why says what needs it.
func RequireRoot(t TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Unavailable(t, "%s needs root (run the tests as root, as .ci/run does)", why)
	}
}

// RequireCommand runs name with args and stops the test ([Missing]) if it fails: for checks a
// lookup cannot make (a Python module, a kernel feature). what names the missing piece.
func RequireCommand(t TB, what, install, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		Missing(t, fmt.Sprintf("%s (%s %s: %v %s)", what, name, strings.Join(args, " "), err,
			strings.TrimSpace(string(out))), install)
	}
}

// OptIn returns the value of the environment variable env, or skips the test when it is empty,
// also under CI: for measurements that read data from outside the repository (why says what to
// set it to) and run only when asked for.
func OptIn(t TB, env, why string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		t.Skipf("opt-in measurement: set %s to %s", env, why)
	}
	return v
}

// ModuleRoot returns the directory of the netlock module's go.mod, found from the current
// directory upwards (go test runs a test in its package's directory).
func ModuleRoot(t TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("testenv: no go.mod above %s", dir)
			return ""
		}
	}
}

// BuildNetlock builds cmd/netlock from this checkout into t.TempDir() and returns the binary's
// path. A failed build fails the test: a test that needs the binary never skips for want of one.
func BuildNetlock(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "netlock")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/netlock")
	cmd.Dir = ModuleRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/netlock: %v\n%s", err, out)
	}
	return bin
}

// RealToolsEnv names the directory of the real P4 tools (p4c, bmv2, the Tofino compiler) that
// `make test-real` runs against: a prefix whose bin/ holds p4test, p4c-bm2-ss, simple_switch,
// simple_switch_grpc, simple_switch_CLI, p4c-barefoot and bfas, as
// ../shared/tools/p4tools/build.sh lays them out (docs/targets.md). `make test-real` sets it
// (default /opt/p4tools); unset, the tests of the real toolchain skip even where the tools are
// built, so that `make test` (and CI) does not depend on what a machine happens to have installed.
const RealToolsEnv = "NETLOCK_P4TOOLS"

// RealToolsDir returns $NETLOCK_P4TOOLS ("" when it is unset: the real tools are not asked for).
func RealToolsDir() string { return os.Getenv(RealToolsEnv) }

// RealToolsIncludes returns the P4 include directories of the real tools that exist:
// $NETLOCK_P4TOOLS/share/tofino-p4include (tna.p4, t2na.p4) and share/p4include (core.p4), as
// ../shared/tools/p4tools/build.sh lays them out. p4c-barefoot looks for its includes next to its
// executable (../share/p4c/p4include), which that build does not fill: without them as -I
// directories it fails at #include <core.p4>.
func RealToolsIncludes() []string {
	var dirs []string
	for _, d := range []string{"tofino-p4include", "p4include"} {
		p := filepath.Join(RealToolsDir(), "share", d)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			dirs = append(dirs, p)
		}
	}
	return dirs
}

// RealTool returns the path of a real P4 tool ($NETLOCK_P4TOOLS/bin/name), or skips the test when
// NETLOCK_P4TOOLS is unset or the tool is not there, also under CI: CI cannot fetch p4c's or bmv2's
// sources, so the tests of the real toolchain are opt-in (`make test-real`). When they are asked
// for and the tool is present they run and must pass. Name such tests TestReal* so that
// `make test-real` finds them.
func RealTool(t TB, name string) string {
	t.Helper()
	if RealToolsDir() == "" {
		t.Skipf("opt-in (make test-real): %s is unset; it names the prefix of the real P4 tools "+
			"(../shared/tools/p4tools/build.sh)", RealToolsEnv)
		return ""
	}
	p := filepath.Join(RealToolsDir(), "bin", name)
	if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		t.Skipf("opt-in (make test-real): %s is not built; build it with ../shared/tools/p4tools/build.sh "+
			"into %s (or set %s)", p, RealToolsDir(), RealToolsEnv)
		return ""
	}
	return p
}
