package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/netlock-go/netlock/bmv2/p4rt"
)

// The push tests run netlock in a child process (this test binary, via TestHelperProcess) so
// that they see exactly what a user's terminal shows: the child's real stdout and stderr,
// including anything the P4Runtime client library writes with logrus.
const helperMode = "NETLOCK_TEST_HELPER"

// TestHelperProcess is the child: "main" runs the netlock command line given after "--";
// "oldclose" ends a client library stream the way p4 push used to (the negative control).
// It does nothing in a normal test run.
func TestHelperProcess(t *testing.T) {
	switch os.Getenv(helperMode) {
	case "main":
		args := os.Args
		for i, a := range args {
			if a == "--" {
				args = args[i+1:]
				break
			}
		}
		os.Args = append([]string{"netlock"}, args...)
		main()
		os.Exit(0)
	case "oldclose":
		conn, err := grpc.NewClient(os.Getenv("NETLOCK_TEST_ADDR"), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			panic(err)
		}
		c := client.NewClient(p4v1.NewP4RuntimeClient(conn), 1, &p4v1.Uint128{Low: 1})
		arb := make(chan bool, 4)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = c.Run(make(chan struct{}), arb, make(chan *p4v1.StreamMessageResponse, 4))
		}()
		<-arb
		conn.Close()
		<-done
		os.Exit(0)
	}
}

func runChild(t *testing.T, mode string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperProcess$", "--"}, args...)...)
	cmd.Env = append(append(os.Environ(), helperMode+"="+mode), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("netlock %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func memSwitch(t *testing.T) string {
	t.Helper()
	srv, err := p4rt.NewServer(p4rt.Config{DeviceID: 1, Device: p4rt.NewMemDevice()})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, err := p4rt.Serve("127.0.0.1:0", srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr.String()
}

// TestP4PushPrintsNoClientErrors: `netlock p4 push` with a runtime file prints its one result
// line and nothing else; in particular not the client library's
// `level=error ... client connection is closing` that it printed after every push.
func TestP4PushPrintsNoClientErrors(t *testing.T) {
	addr := memSwitch(t)
	out := runChild(t, "main", nil, "p4", "push", "--addr", addr, "--device-id", "1",
		"../../testbed/mininet/basic.p4", "../../testbed/mininet/s1-runtime.json")
	want := "pushed ../../testbed/mininet/basic.p4 to device 1 at " + addr + "; "
	if !strings.HasPrefix(out, want) || strings.Count(out, "\n") != 1 {
		t.Fatalf("output:\n%s\nwant one line starting %q", out, want)
	}
	for _, bad := range []string{"level=", "client connection is closing", "Failed to receive"} {
		if strings.Contains(out, bad) {
			t.Fatalf("output contains %q:\n%s", bad, out)
		}
	}
}

// TestP4PushOutputCaptureNegativeControl: the same capture sees the library's error line when a
// stream is closed the old way, so the check above can fail.
func TestP4PushOutputCaptureNegativeControl(t *testing.T) {
	addr := memSwitch(t)
	out := runChild(t, "oldclose", []string{"NETLOCK_TEST_ADDR=" + addr})
	if !strings.Contains(out, "level=error") || !strings.Contains(out, "client connection is closing") {
		t.Fatalf("the old close path printed %q; the capture would not catch the regression", out)
	}
}
