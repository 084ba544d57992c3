package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/internal/tlsconf/tlstest"
)

// TestSwitchTLS: netlock switch with simple_switch_grpc's TLS flags and client authentication
// serves `netlock p4 push` holding the controller's certificate, and refuses it without one or
// with a certificate another CA signed (issue 18: the P4Runtime port was open to anyone).
func TestSwitchTLS(t *testing.T) {
	p := tlstest.NewPKI(t)
	sw := startSwitch(t, []string{"--no-p4", "--device-id", "1", "--grpc-server-addr", "127.0.0.1:0",
		"--grpc-server-ssl", "--grpc-server-cert", p.ServerCert, "--grpc-server-key", p.ServerKey,
		"--grpc-server-cacert", p.CA, "--grpc-server-with-client-auth"})
	push := func(extra ...string) (string, error) {
		timeout := "2s" // a refused push fails when it runs out
		if len(extra) > 2 && extra[3] == p.ClientCert {
			timeout = "30s"
		}
		args := append([]string{"-test.run=^TestHelperProcess$", "--", "p4", "push", "--addr", sw.grpc, "--device-id", "1",
			"--timeout", timeout}, extra...)
		args = append(args, "../../testbed/mininet/basic.p4", "../../testbed/mininet/s1-runtime.json")
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), helperMode+"=main")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := push(); err == nil {
		t.Fatalf("a plaintext push was served:\n%s", out)
	}
	if out, err := push("--tls-ca", p.CA); err == nil {
		t.Fatalf("a push without a client certificate was served:\n%s", out)
	}
	if out, err := push("--tls-ca", p.CA, "--tls-cert", p.StrangerCert, "--tls-key", p.StrangerKey); err == nil {
		t.Fatalf("a push with another CA's certificate was served:\n%s", out)
	}
	out, err := push("--tls-ca", p.CA, "--tls-cert", p.ClientCert, "--tls-key", p.ClientKey)
	if err != nil || !strings.HasPrefix(out, "pushed ") {
		t.Fatalf("the controller's push: %v\n%s", err, out)
	}
	if strings.Contains(sw.out.String(), "WARNING") {
		t.Fatalf("a switch on loopback with mutual TLS warned:\n%s", sw.out.String())
	}
}

// TestSwitchWarnsWithoutTLS: a P4Runtime port beyond loopback without TLS is announced loudly;
// on loopback it is not; the TLS flags need --grpc-server-ssl.
func TestSwitchWarnsWithoutTLS(t *testing.T) {
	sw := startSwitch(t, []string{"--no-p4", "--grpc-server-addr", "0.0.0.0:0"})
	if !strings.Contains(sw.out.String(), "WARNING: P4Runtime on 0.0.0.0:0 without TLS") {
		t.Fatalf("no warning for a plaintext port on every address:\n%s", sw.out.String())
	}
	sw.stop()
	lo := startSwitch(t, []string{"--no-p4", "--grpc-server-addr", "127.0.0.1:0"})
	if strings.Contains(lo.out.String(), "WARNING") {
		t.Fatalf("a loopback port warned:\n%s", lo.out.String())
	}
	lo.stop()
	cmd := newSwitchCommand()
	cmd.SetArgs([]string{"--no-p4", "--grpc-server-addr", "127.0.0.1:0", "--grpc-server-cert", "x.pem"})
	cmd.SetOut(&lockedBuffer{})
	cmd.SetErr(&lockedBuffer{})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "need --grpc-server-ssl") {
		t.Fatalf("--grpc-server-cert without --grpc-server-ssl: %v", err)
	}
}
