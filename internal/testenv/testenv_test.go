package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// recorder is a TB that records how a check stopped the test. Fatalf and Skipf end the calling
// goroutine, as testing.T's do.
type recorder struct {
	fatal, skip string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Skipf(format string, args ...any) {
	r.skip = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls check on a fresh recorder in its own goroutine (so that Goexit ends only that one)
// and reports what happened and whether check returned normally.
func run(check func(TB)) (r *recorder, returned bool) {
	r = &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r)
		returned = true
	}()
	<-done
	return r, returned
}

const missingTool = "netlock-testenv-no-such-tool"

func TestCIDecides(t *testing.T) {
	checks := []struct {
		name  string
		check func(TB)
		want  string // in the message
	}{
		{"RequireTool", func(tb TB) { RequireTool(tb, missingTool, "apt-get install -y nothing") },
			missingTool + " is missing; install it with: apt-get install -y nothing"},
		{"Missing", func(tb TB) { Missing(tb, "tshark", "apt-get install -y tshark") }, "apt-get install -y tshark"},
		{"Unavailable", func(tb TB) { Unavailable(tb, "ip netns add: %v", errors.New("operation not permitted")) },
			"ip netns add: operation not permitted"},
		{"RequireCommand", func(tb TB) { RequireCommand(tb, "a failing check", "nothing", "false") }, "a failing check"},
	}
	for _, ci := range []struct {
		env     string
		failure bool
	}{{"true", true}, {"1", true}, {"TRUE", true}, {"", false}, {"false", false}, {"0", false}, {"yes", false}} {
		for _, c := range checks {
			t.Run(fmt.Sprintf("CI=%q/%s", ci.env, c.name), func(t *testing.T) {
				t.Setenv("CI", ci.env)
				r, returned := run(c.check)
				if returned {
					t.Fatal("the check returned: the test would have gone on without what it needs")
				}
				got := r.skip
				if ci.failure {
					if r.fatal == "" || r.skip != "" {
						t.Fatalf("fatal %q, skip %q; want a failure under CI", r.fatal, r.skip)
					}
					got = r.fatal
				} else if r.skip == "" || r.fatal != "" {
					t.Fatalf("fatal %q, skip %q; want a skip outside CI", r.fatal, r.skip)
				}
				if !strings.Contains(got, c.want) {
					t.Errorf("message %q does not say %q", got, c.want)
				}
			})
		}
	}
}

func TestPresentPasses(t *testing.T) {
	t.Setenv("CI", "true")
	r, returned := run(func(tb TB) {
		if p := RequireTool(tb, "sh", "-"); p == "" {
			tb.Fatalf("no path")
		}
		RequireCommand(tb, "a true command", "-", "true")
	})
	if !returned || r.fatal != "" || r.skip != "" {
		t.Fatalf("returned %v, fatal %q, skip %q", returned, r.fatal, r.skip)
	}
}

func TestRequireRoot(t *testing.T) {
	t.Setenv("CI", "true")
	r, returned := run(func(tb TB) { RequireRoot(tb, "an AF_PACKET socket") })
	if os.Geteuid() == 0 {
		if !returned || r.fatal != "" {
			t.Fatalf("as root: returned %v, fatal %q", returned, r.fatal)
		}
		return
	}
	if returned || !strings.Contains(r.fatal, "an AF_PACKET socket needs root") {
		t.Fatalf("not root, CI=true: returned %v, fatal %q", returned, r.fatal)
	}
}

// OptIn skips also under CI: it is for measurements that need data from outside the repository.
func TestOptIn(t *testing.T) {
	t.Setenv("CI", "true")
	t.Setenv("NETLOCK_TESTENV_X", "")
	r, returned := run(func(tb TB) { OptIn(tb, "NETLOCK_TESTENV_X", "a directory") })
	if returned || r.fatal != "" || !strings.Contains(r.skip, "set NETLOCK_TESTENV_X to a directory") {
		t.Fatalf("returned %v, fatal %q, skip %q", returned, r.fatal, r.skip)
	}
	t.Setenv("NETLOCK_TESTENV_X", "/x")
	if v := OptIn(t, "NETLOCK_TESTENV_X", ""); v != "/x" {
		t.Fatalf("OptIn = %q", v)
	}
}

// TestMissingToolHelper is the test that TestGoTestVerdict runs in a child `go test` process: it
// needs a tool that does not exist.
func TestMissingToolHelper(t *testing.T) {
	if os.Getenv("NETLOCK_TESTENV_CHILD") == "" {
		return // not a test of its own: TestGoTestVerdict runs it in a child (a skip would count as one)
	}
	RequireTool(t, missingTool, "apt-get install -y "+missingTool)
	t.Log("unreachable: the tool is missing")
}

// TestGoTestVerdict checks the verdict the real testing package reports, in a child process:
// with CI=true a test that needs a missing tool FAILS (and the process exits non-zero) with the
// install hint; without CI it is SKIPPED with the same hint.
func TestGoTestVerdict(t *testing.T) {
	for _, tt := range []struct {
		ci      string
		verdict string
		exitErr bool
	}{{"true", "--- FAIL: TestMissingToolHelper", true}, {"", "--- SKIP: TestMissingToolHelper", false}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissingToolHelper$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "NETLOCK_TESTENV_CHILD=1", "CI="+tt.ci)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if gotExit := errors.As(err, &ee); gotExit != tt.exitErr || (err != nil && !gotExit) {
			t.Errorf("CI=%q: exit error %v, want one: %v\n%s", tt.ci, err, tt.exitErr, out)
		}
		for _, want := range []string{tt.verdict, "install it with: apt-get install -y " + missingTool} {
			if !strings.Contains(string(out), want) {
				t.Errorf("CI=%q: output lacks %q:\n%s", tt.ci, want, out)
			}
		}
		if strings.Contains(string(out), "unreachable") {
			t.Errorf("CI=%q: the test went on after the missing tool:\n%s", tt.ci, out)
		}
	}
}

func TestBuildNetlock(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/netlock")
	}
	bin := BuildNetlock(t)
	out, err := exec.Command(bin, "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "netlock") {
		t.Fatalf("%s --help: %v\n%s", bin, err, out)
	}
}
