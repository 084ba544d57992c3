// Package simpleswitch drives bmv2's real simple_switch (or simple_switch_grpc) for tests: it
// runs the switch in a network namespace of its own with one veth pair per port, sends and
// receives frames on the pairs' other ends (AF_PACKET sockets in the caller's namespace),
// programs it through one long-lived simple_switch_CLI (the Thrift runtime), and knows when the
// switch has finished with everything it was sent by following its debug log.
//
// Waiting for the switch. simple_switch's debug log names every step of a packet (bmv2's
// simple_switch.cpp, ingress_thread and egress_thread). The driver counts packets in ingress
// (one per frame sent, one per resubmit and recirculation; done at "Resubmitting packet",
// "Multicast requested for packet" or "Egress port is N") and packets queued for egress (one per
// "Egress port is N" with N not the drop port, per "Cloning packet to egress port" and per
// "Replicating packet on port"; done at "Dropping packet at the end of egress", "Recirculating
// packet" or "Transmitting packet ... out of port P"). [Switch.Wait] returns when both counts
// are zero and every frame the log says went out of a port with a veth has arrived there. The
// replications of a multicast are logged after the line that ends the packet's ingress, so
// after a multicast Wait also waits until the log has been quiet for MulticastQuiet.
//
// Everything here needs root (network namespaces, veth pairs, raw sockets).
package simpleswitch

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/port"
	"github.com/netlock-go/netlock/internal/testenv"
)

// DropPort is simple_switch's default drop port.
const DropPort = 511

// MulticastQuiet is how long the log must stay quiet after a multicast before Wait trusts its
// counts (the replications are logged after the packet's ingress ends).
const MulticastQuiet = 200 * time.Millisecond

// Options configures a switch.
type Options struct {
	// Switch is the path of simple_switch (or simple_switch_grpc); CLI that of
	// simple_switch_CLI, either bmv2's Python script or a wrapper that runs it (the one
	// shared/tools/p4tools/build.sh installs is a /bin/sh script that sets PYTHONPATH and
	// execs python3). Python is the interpreter the CLI runs with (default /usr/bin/python3:
	// the CLI needs Debian's thrift module): a Python script is run as Python -u CLI, a
	// wrapper is run itself with Python's directory first on PATH, so that the wrapper's
	// python3 is Python's (see cliCommand).
	Switch, CLI, Python string
	// JSON is the program p4c-bm2-ss compiled; empty starts the switch without one (--no-p4,
	// for simple_switch_grpc, which gets its pipeline over P4Runtime).
	JSON string
	// Ports are the switch's ports; each gets a veth pair.
	Ports []int
	// Debug turns on the debug log that Wait needs. Without it (benchmarks) Wait cannot be used.
	Debug bool
	// Args are more arguments for the switch, before the JSON (simple_switch_grpc's
	// -- --grpc-server-addr ... go after it: TargetArgs).
	Args       []string
	TargetArgs []string
	// Dir holds the log; it must exist.
	Dir string
	// NoCLI starts no simple_switch_CLI (a switch without a Thrift runtime: netlock switch, which
	// takes simple_switch's flags); Ready, if set, is then called until it returns nil to tell
	// that the switch is up.
	NoCLI bool
	Ready func(ns string) error
	// Command are the words after the switch's path, before its flags (netlock's "switch").
	Command []string
	// Raw leaves the host ends of the ports to the caller (Switch.Raw): nothing is received,
	// Send, Wait and Received cannot be used.
	Raw bool
}

// Switch is a running simple_switch.
type Switch struct {
	opts Options
	ns   string
	// tmp is the instance's own directory (its notifications socket); thrift and device are
	// its Thrift port and device id, both its own (see Start).
	tmp    string
	thrift int
	device int
	hosts  map[int]string // port -> the veth end in the caller's namespace
	raws   map[int]*port.RawPort
	proc   *exec.Cmd
	exit   chan error
	cli    *cli

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every change below
	inIngress int
	inEgress  int
	txWant    map[int]int // frames the log says went out of each port with a veth
	rx        map[int][][]byte
	lastLine  time.Time
	mcast     bool // a multicast was seen since the last Wait
	logTail   []string
	logErr    error
	lines     int
}

// instances numbers the switches this process starts: each gets its own device id and
// Thrift port from it.
var instances atomic.Int32

// Start creates the namespace and the veth pairs and starts the switch and its CLI. Several
// switches can run at once (parallel tests, several switches in one test): each has its own
// namespace, veth pairs, Thrift port, device id and nanomsg notifications socket (an ipc path
// in a temporary directory of its own; bmv2's default, ipc:///tmp/bmv2-<device-id>-notifications.ipc,
// is shared by every switch with the same device id and the second one fails to bind it).
func Start(o Options) (s *Switch, err error) {
	if o.Python == "" {
		o.Python = "/usr/bin/python3"
	}
	id := rand.Uint32() & 0xffffff
	n := int(instances.Add(1) - 1)
	s = &Switch{opts: o, ns: fmt.Sprintf("nlss%06x", id), thrift: 9090 + n%1000, device: n,
		hosts: map[int]string{}, raws: map[int]*port.RawPort{},
		changed: make(chan struct{}), txWant: map[int]int{}, rx: map[int][][]byte{}, exit: make(chan error, 1)}
	defer func() {
		if err != nil {
			s.Close()
			s = nil
		}
	}()
	// A short path of its own: an ipc socket's path must fit in sun_path (108 bytes), which a
	// test's TempDir need not.
	if s.tmp, err = os.MkdirTemp("", "nlss"); err != nil {
		return s, fmt.Errorf("simpleswitch: %w", err)
	}
	if err := run("ip", "netns", "add", s.ns); err != nil {
		return s, err
	}
	if err := run("ip", "-n", s.ns, "link", "set", "lo", "up"); err != nil {
		return s, err
	}
	var ifArgs []string
	for _, p := range o.Ports {
		h, sw := fmt.Sprintf("n%06xp%dh", id, p), fmt.Sprintf("n%06xp%ds", id, p)
		if len(h) > 15 {
			return s, fmt.Errorf("simpleswitch: interface name %s too long", h)
		}
		if err := run("ip", "link", "add", h, "type", "veth", "peer", "name", sw, "netns", s.ns); err != nil {
			return s, err
		}
		s.hosts[p] = h
		// No IPv6 (router solicitations, DAD): only the test's frames cross the pairs.
		if err := os.WriteFile("/proc/sys/net/ipv6/conf/"+h+"/disable_ipv6", []byte("1"), 0o644); err != nil {
			return s, fmt.Errorf("simpleswitch: %w", err)
		}
		if err := run("ip", "netns", "exec", s.ns, "sh", "-c", "echo 1 > /proc/sys/net/ipv6/conf/"+sw+"/disable_ipv6"); err != nil {
			return s, err
		}
		for _, args := range [][]string{{"link", "set", h, "up"}, {"-n", s.ns, "link", "set", sw, "up"}} {
			if err := run("ip", args...); err != nil {
				return s, err
			}
		}
		ifArgs = append(ifArgs, "-i", fmt.Sprintf("%d@%s", p, sw))
	}
	for _, p := range o.Ports {
		r, err := port.OpenRaw(s.hosts[p])
		if err != nil {
			return s, err
		}
		s.raws[p] = r
		if !o.Raw {
			go s.receive(p, r)
		}
	}
	args := append([]string{"netns", "exec", s.ns, o.Switch}, o.Command...)
	args = append(args, ifArgs...)
	args = append(args, "--thrift-port", strconv.Itoa(s.thrift))
	if len(o.Command) == 0 {
		// bmv2's own switch (netlock switch takes neither flag: it has no nanomsg, and its
		// --device-id is the P4Runtime device id its clients must name).
		args = append(args, "--device-id", strconv.Itoa(s.device),
			"--notifications-addr", "ipc://"+filepath.Join(s.tmp, "notifications.ipc"))
	}
	logPath := filepath.Join(o.Dir, "switch.log")
	if o.Debug {
		args = append(args, "--log-file", logPath, "--log-flush", "-L", "debug")
		if len(o.Command) == 0 {
			// The bytes of every frame sent, enough of them for a frame too short to cross a
			// veth pair (see ShortFrame).
			args = append(args, "--dump-packet-data", strconv.Itoa(ShortFrame))
		}
	}
	args = append(args, o.Args...)
	if o.JSON != "" {
		args = append(args, o.JSON)
	} else {
		args = append(args, "--no-p4")
	}
	if len(o.TargetArgs) > 0 {
		args = append(append(args, "--"), o.TargetArgs...)
	}
	out, err := os.Create(filepath.Join(o.Dir, "switch.out"))
	if err != nil {
		return s, fmt.Errorf("simpleswitch: %w", err)
	}
	s.proc = exec.Command("ip", args...)
	s.proc.Stdout, s.proc.Stderr = out, out
	if err := s.proc.Start(); err != nil {
		out.Close()
		return s, fmt.Errorf("simpleswitch: start %s: %w", o.Switch, err)
	}
	go func() { s.exit <- s.proc.Wait(); out.Close() }()
	if o.Debug {
		go s.follow(logPath)
	}
	// The CLI connects once the Thrift server is up.
	deadline := time.Now().Add(60 * time.Second)
	for {
		var err error
		if o.NoCLI {
			if o.Ready == nil {
				break
			}
			if err = o.Ready(s.ns); err == nil {
				break
			}
		} else {
			var c *cli
			if c, err = startCLI(s.ns, o.Python, o.CLI, s.thrift); err == nil {
				s.cli = c
				break
			}
		}
		select {
		case e := <-s.exit:
			s.exit <- e
			data, _ := os.ReadFile(filepath.Join(o.Dir, "switch.out"))
			return s, fmt.Errorf("simpleswitch: %s exited (%v): %s", filepath.Base(o.Switch), e, lastLines(string(data), 20))
		default:
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("simpleswitch: the switch is not up: %w", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return s, nil
}

func run(name string, args ...string) error {
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("simpleswitch: %s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

// Raw is the AF_PACKET socket on the host end of port p (Options.Raw), or nil.
func (s *Switch) Raw(p int) *port.RawPort { return s.raws[p] }

// ThriftPort is the port the switch's Thrift runtime listens on, in its namespace.
func (s *Switch) ThriftPort() int { return s.thrift }

// DeviceID is the switch's --device-id (for simple_switch_grpc, its P4Runtime device id too).
func (s *Switch) DeviceID() int { return s.device }

// Namespace is the network namespace the switch runs in (its gRPC and Thrift servers listen
// on its loopback).
func (s *Switch) Namespace() string { return s.ns }

// HostInterface is the veth end of port p in the caller's namespace.
func (s *Switch) HostInterface(p int) string { return s.hosts[p] }

func (s *Switch) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Switch) receive(p int, r *port.RawPort) {
	buf := make([]byte, port.MaxFrame)
	for {
		n, err := r.Recv(buf)
		if err != nil {
			return
		}
		s.mu.Lock()
		s.rx[p] = append(s.rx[p], append([]byte(nil), buf[:n]...))
		s.notifyLocked()
		s.mu.Unlock()
	}
}

var (
	reEgressPort = regexp.MustCompile(`Egress port is (\d+)`)
	reTransmit   = regexp.MustCompile(`Transmitting packet of size \d+ out of port (\d+)`)
	reSending    = regexp.MustCompile(`Sending packet of length (\d+) on port (\d+): ([0-9a-fA-F]*)`)
)

// ShortFrame is the length of an Ethernet header: a shorter frame cannot cross a veth pair
// (Linux's dev_validate_header refuses it with EINVAL; simple_switch's libpcap write of a
// truncated packet fails the same way). With Options.Debug, simple_switch logs the first
// ShortFrame bytes of every frame it sends (--dump-packet-data), and a frame shorter than
// this counts as received on its port with the bytes of the log.
const ShortFrame = 14

// follow reads the switch's debug log as it grows and keeps the counts. bmv2 rotates the log
// (--log-file-max-size, 5 MB by default: FILE.txt is renamed FILE.1.txt and a new FILE.txt
// begins), so at the end of the file follow checks whether the name now holds another file,
// and if so reads what is left of the old one and goes on with the new.
func (s *Switch) follow(path string) {
	var f *os.File
	var name string
	for f == nil {
		for _, p := range []string{path, path + ".txt"} {
			if g, err := os.Open(p); err == nil {
				f, name = g, p
				break
			}
		}
		if f == nil {
			select {
			case e := <-s.exit:
				s.exit <- e
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	defer func() { f.Close() }()
	rd := bufio.NewReader(f)
	var partial string
	for {
		line, err := rd.ReadString('\n')
		if err == io.EOF {
			partial += line
			if rotated(f, name) {
				// The old file is complete: read its rest, then the new one.
				for {
					line, err := rd.ReadString('\n')
					partial += line
					if err != nil {
						break
					}
					s.line(partial)
					partial = ""
				}
				g, err := os.Open(name)
				if err != nil {
					s.mu.Lock()
					s.logErr = err
					s.notifyLocked()
					s.mu.Unlock()
					return
				}
				f.Close()
				f = g
				rd = bufio.NewReader(f)
				continue
			}
			select {
			case e := <-s.exit:
				s.exit <- e
				return
			case <-time.After(2 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			s.mu.Lock()
			s.logErr = err
			s.notifyLocked()
			s.mu.Unlock()
			return
		}
		s.line(partial + line)
		partial = ""
	}
}

// rotated tells whether name no longer is the file f (the log was rotated and a new file
// has that name).
func rotated(f *os.File, name string) bool {
	cur, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(name)
	return err == nil && !os.SameFile(cur, now)
}

func (s *Switch) line(l string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines++
	s.lastLine = time.Now()
	s.logTail = append(s.logTail, strings.TrimSpace(l))
	if len(s.logTail) > 200 {
		s.logTail = s.logTail[len(s.logTail)-200:]
	}
	switch {
	case strings.Contains(l, "Resubmitting packet"):
		// The packet's ingress ends; the resubmitted copy enters ingress.
	case strings.Contains(l, "Multicast requested for packet"):
		s.inIngress--
		s.mcast = true
	case strings.Contains(l, "Replicating packet on port"):
		s.inEgress++
	case strings.Contains(l, "Cloning packet to egress port"):
		s.inEgress++
	case strings.Contains(l, "Dropping packet at the end of egress"):
		s.inEgress--
	case strings.Contains(l, "Recirculating packet"):
		s.inEgress--
		s.inIngress++
	case strings.Contains(l, "Priority out of range, dropping packet"):
		s.inEgress--
	case strings.Contains(l, "Sending packet of length"):
		// After "Transmitting packet", which counted the frame in txWant.
		m := reSending.FindStringSubmatch(l)
		if m == nil {
			return
		}
		n, _ := strconv.Atoi(m[1])
		p, _ := strconv.Atoi(m[2])
		data, err := hex.DecodeString(m[3])
		if _, ok := s.hosts[p]; !ok || n >= ShortFrame || err != nil || len(data) != n {
			return
		}
		s.rx[p] = append(s.rx[p], data)
	default:
		if m := reEgressPort.FindStringSubmatch(l); m != nil {
			s.inIngress--
			if n, _ := strconv.Atoi(m[1]); n != DropPort {
				s.inEgress++
			}
		} else if m := reTransmit.FindStringSubmatch(l); m != nil {
			s.inEgress--
			n, _ := strconv.Atoi(m[1])
			if _, ok := s.hosts[n]; ok {
				s.txWant[n]++
			}
		} else {
			return
		}
	}
	s.notifyLocked()
}

// Send sends a frame into the switch on port p.
func (s *Switch) Send(p int, frame []byte) error {
	r, ok := s.raws[p]
	if !ok {
		return fmt.Errorf("simpleswitch: no port %d", p)
	}
	s.mu.Lock()
	s.inIngress++
	s.mu.Unlock()
	return r.Send(frame)
}

// ErrTimeout is returned by Wait when the switch does not finish in time.
var ErrTimeout = errors.New("simpleswitch: the switch did not finish in time")

// Wait waits until the switch has finished with every frame sent so far (see the package
// documentation), or timeout.
func (s *Switch) Wait(timeout time.Duration) error {
	if !s.opts.Debug {
		return errors.New("simpleswitch: Wait needs Options.Debug")
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		done := s.inIngress == 0 && s.inEgress == 0
		for p, n := range s.txWant {
			if len(s.rx[p]) < n {
				done = false
			}
		}
		quiet := !s.mcast || time.Since(s.lastLine) >= MulticastQuiet
		logErr := s.logErr
		state := fmt.Sprintf("in ingress %d, queued for egress %d, frames %v of %v", s.inIngress, s.inEgress, rxCounts(s.rx), s.txWant)
		tail := append([]string(nil), s.logTail[max(0, len(s.logTail)-30):]...)
		s.mu.Unlock()
		if logErr != nil {
			return fmt.Errorf("simpleswitch: log: %w", logErr)
		}
		if s.inIngressNegative() {
			return fmt.Errorf("simpleswitch: the log shows more packets than were sent (%s):\n%s", state, strings.Join(tail, "\n"))
		}
		if done && quiet {
			s.mu.Lock()
			s.mcast = false
			s.mu.Unlock()
			return nil
		}
		var tick <-chan time.Time
		if done {
			tick = time.After(MulticastQuiet / 4)
		}
		select {
		case <-ch:
		case <-tick:
		case e := <-s.exit:
			s.exit <- e
			return fmt.Errorf("simpleswitch: the switch exited: %v", e)
		case <-deadline.C:
			return fmt.Errorf("%w (%s); last log lines:\n%s", ErrTimeout, state, strings.Join(tail, "\n"))
		}
	}
}

func (s *Switch) inIngressNegative() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inIngress < 0 || s.inEgress < 0
}

func rxCounts(rx map[int][][]byte) map[int]int {
	out := map[int]int{}
	for p, fs := range rx {
		out[p] = len(fs)
	}
	return out
}

// Received returns the frames received on each port since the last call, and forgets them.
func (s *Switch) Received() map[int][][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.rx
	s.rx = map[int][][]byte{}
	for p, n := range s.txWant {
		s.txWant[p] = max(0, n-len(out[p]))
	}
	return out
}

// LogLines is the number of lines of the debug log read so far.
func (s *Switch) LogLines() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lines
}

// CLI runs one simple_switch_CLI command and returns its output. The CLI reports most errors
// as output ("Error: ...", "Invalid ..."); those come back as errors.
func (s *Switch) CLI(cmd string) (string, error) {
	if s.cli == nil {
		return "", errors.New("simpleswitch: no CLI (Options.NoCLI)")
	}
	out, err := s.cli.do(cmd)
	if err != nil {
		return out, err
	}
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "Error") || strings.HasPrefix(l, "Invalid") || strings.HasPrefix(l, "Traceback") {
			return out, fmt.Errorf("simpleswitch: %s: %s", cmd, strings.TrimSpace(out))
		}
	}
	return out, nil
}

// Close stops the switch and the CLI and removes the namespace and the veth pairs.
func (s *Switch) Close() error {
	if s.cli != nil {
		s.cli.close()
	}
	for _, r := range s.raws {
		r.Close()
	}
	if s.proc != nil && s.proc.Process != nil {
		s.proc.Process.Kill()
		<-s.exit
	}
	hosts := make([]string, 0, len(s.hosts))
	for _, h := range s.hosts {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		_ = run("ip", "link", "del", h)
	}
	if s.tmp != "" {
		_ = os.RemoveAll(s.tmp)
	}
	return run("ip", "netns", "del", s.ns)
}

// cli is one simple_switch_CLI process fed on stdin; its prompt ends each answer.
type cli struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	mu  sync.Mutex
}

const prompt = "RuntimeCmd: "

// cliCommand is how to run the CLI at path, whose file begins with head, with the
// interpreter python: bmv2's Python script (a "#!" line naming python, python3, ...,
// directly or through env) runs as python -u path; anything else (a shell wrapper, a
// binary) runs itself, with python's directory first on PATH so that a wrapper's "python3"
// is python. Both get PYTHONUNBUFFERED=1: the driver reads the CLI's prompt through a pipe.
// env is the environment to start from; argv[0] is the program to run.
func cliCommand(path string, head []byte, python string, env []string) (argv, outEnv []string) {
	outEnv = append(slices.Clone(env), "PYTHONUNBUFFERED=1")
	if isPythonScript(head) {
		return []string{python, "-u", path}, outEnv
	}
	pathVar := filepath.Dir(python)
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "PATH="); ok {
			if v != "" {
				pathVar += string(filepath.ListSeparator) + v
			}
			break
		}
	}
	return []string{path}, append(outEnv, "PATH="+pathVar)
}

// isPythonScript tells whether a file beginning with head is a Python script: its "#!" line
// names an interpreter whose name starts with "python", itself or as env's argument.
func isPythonScript(head []byte) bool {
	line, ok := bytes.CutPrefix(head, []byte("#!"))
	if !ok {
		return false
	}
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	words := strings.Fields(string(line))
	if len(words) == 0 {
		return false
	}
	interp := filepath.Base(words[0])
	if interp == "env" {
		interp = ""
		for _, w := range words[1:] {
			if !strings.HasPrefix(w, "-") && !strings.Contains(w, "=") {
				interp = filepath.Base(w)
				break
			}
		}
	}
	return strings.HasPrefix(interp, "python")
}

// readHead reads the first bytes of the file at path (enough for a "#!" line).
func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("simpleswitch: CLI: %w", err)
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("simpleswitch: CLI: %w", err)
	}
	return buf[:n], nil
}

func startCLI(ns, python, path string, thriftPort int) (*cli, error) {
	head, err := readHead(path)
	if err != nil {
		return nil, err
	}
	argv, env := cliCommand(path, head, python, os.Environ())
	c := &cli{cmd: exec.Command("ip", append(append([]string{"netns", "exec", ns}, argv...), "--thrift-port", strconv.Itoa(thriftPort))...)}
	c.cmd.Env = env
	in, err := c.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	outp, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c.cmd.Stderr = c.cmd.Stdout
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	c.in, c.out = in, bufio.NewReader(outp)
	first, err := c.readToPrompt()
	if err != nil {
		c.close()
		return nil, fmt.Errorf("%w: %s", err, lastLines(first, 5))
	}
	return c, nil
}

func (c *cli) readToPrompt() (string, error) {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := c.out.Read(buf)
		b.Write(buf[:n])
		if strings.HasSuffix(b.String(), prompt) {
			return strings.TrimSuffix(b.String(), prompt), nil
		}
		if err != nil {
			return b.String(), fmt.Errorf("simpleswitch: CLI: %w", err)
		}
	}
}

func (c *cli) do(cmd string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := io.WriteString(c.in, cmd+"\n"); err != nil {
		return "", fmt.Errorf("simpleswitch: CLI: %w", err)
	}
	return c.readToPrompt()
}

func (c *cli) close() {
	c.in.Close()
	if c.cmd.Process != nil {
		c.cmd.Process.Kill()
	}
	_ = c.cmd.Wait()
}

// Compile runs p4c-bm2-ss on src with the -D defines and writes the JSON and the P4Info text
// into dir; it returns their paths and p4c's diagnostics (warnings too). A refusal is an error
// that holds the diagnostics.
func Compile(p4c, src, dir string, defines map[string]string) (json, p4info, diags string, err error) {
	base := strings.TrimSuffix(filepath.Base(src), ".p4")
	json = filepath.Join(dir, base+".json")
	p4info = filepath.Join(dir, base+".p4info.txtpb")
	args := []string{"--std", "p4-16", "-o", json, "--p4runtime-files", p4info}
	keys := make([]string, 0, len(defines))
	for k := range defines {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-D"+k+"="+defines[k])
	}
	args = append(args, src)
	out, err := exec.Command(p4c, args...).CombinedOutput()
	if err != nil {
		return "", "", string(out), fmt.Errorf("p4c-bm2-ss %s: %w:\n%s", filepath.Base(src), err, out)
	}
	return json, p4info, string(out), nil
}

// Tools are the paths of the real tools a test of simple_switch needs.
type Tools struct {
	P4c, Switch, CLI string
}

// RequireTools returns the tools (p4c-bm2-ss, simple_switch, simple_switch_CLI) or stops the
// test as internal/testenv says: skipped where they are not built (also under CI), and, where
// they are, skipped or failed (CI) when the test does not run as root.
func RequireTools(t testenv.TB) Tools {
	t.Helper()
	tl := Tools{P4c: testenv.RealTool(t, "p4c-bm2-ss"), Switch: testenv.RealTool(t, "simple_switch"), CLI: testenv.RealTool(t, "simple_switch_CLI")}
	testenv.RequireRoot(t, "simple_switch on veth pairs in a network namespace")
	return tl
}

// TableAddCommand writes an engine table entry as simple_switch_CLI's table_add: the keys in
// the table's order (ternary and optional keys as VALUE&&&MASK, LPM as VALUE/LENGTH, ranges
// as LOW->HIGH) and, for a table with ternary, optional or range keys, the priority as bmv2
// orders them (the lower wins; P4Runtime's and the engine's higher wins): 10000 - Priority,
// as p4c's bmv2stf.py writes STF priorities.
func TableAddCommand(t *engine.Table, e engine.Entry) (string, error) {
	var b strings.Builder
	b.WriteString("table_add " + t.Name + " ")
	action := e.Action
	for _, a := range t.Actions() {
		if e.ActionID != 0 && a.ID == e.ActionID || e.Action != "" && (a.Name == e.Action || strings.HasSuffix(a.Name, "."+e.Action)) {
			action = a.Name
		}
	}
	if action == "" {
		return "", fmt.Errorf("simpleswitch: entry of %s without an action", t.Name)
	}
	b.WriteString(action)
	prio := false
	for i, k := range t.Keys {
		m := e.Match[i]
		hex := func(v []byte) string { return "0x" + new(big.Int).SetBytes(v).Text(16) }
		wmask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(k.Width)), big.NewInt(1))
		b.WriteByte(' ')
		switch k.Kind {
		case engine.LPM:
			fmt.Fprintf(&b, "%s/%d", hex(m.Value), m.PrefixLen)
		case engine.Ternary, engine.Optional:
			mask := new(big.Int).And(new(big.Int).SetBytes(m.Mask), wmask)
			val := new(big.Int).And(new(big.Int).SetBytes(m.Value), mask)
			fmt.Fprintf(&b, "0x%s&&&0x%s", val.Text(16), mask.Text(16))
			prio = true
		case engine.Range:
			fmt.Fprintf(&b, "%s->%s", hex(m.Low), hex(m.High))
			prio = true
		default:
			b.WriteString(hex(m.Value))
		}
	}
	b.WriteString(" =>")
	for _, v := range e.Args {
		b.WriteString(" 0x" + new(big.Int).SetBytes(v).Text(16))
	}
	if prio {
		// bmv2: the lower value wins; STF (and P4Runtime): the higher.
		fmt.Fprintf(&b, " %d", 10000-int(e.Priority))
	}
	return b.String(), nil
}

// TableSetDefaultCommand writes a default action as simple_switch_CLI's table_set_default.
func TableSetDefaultCommand(t *engine.Table, action string, args [][]byte) string {
	cmd := "table_set_default " + t.Name + " " + action
	for _, v := range args {
		cmd += " 0x" + new(big.Int).SetBytes(v).Text(16)
	}
	return cmd
}

// SyncFrom gives the switch the control-plane state and the register contents of sw, the same
// program loaded in the engine: every table's entries (the switch's cleared first) and
// default action, every configured cell of the indexed meters, every clone session to a port,
// and every register (reset, then the engine's non-zero cells written). Direct meters,
// multicast groups, counters and action profiles are not copied.
func (s *Switch) SyncFrom(sw *engine.Switch) error {
	for _, t := range sw.Tables() {
		if t.ConstEntries() {
			continue
		}
		if _, err := s.CLI("table_clear " + t.Name); err != nil {
			return err
		}
		for _, e := range t.Entries() {
			cmd, err := TableAddCommand(t, e)
			if err != nil {
				return err
			}
			if _, err := s.CLI(cmd); err != nil {
				return err
			}
		}
		name, args := t.Default()
		if _, err := s.CLI(TableSetDefaultCommand(t, name, args)); err != nil {
			// A const default action cannot be set (the program has it already).
			if !strings.Contains(err.Error(), "const") {
				return err
			}
		}
	}
	for _, m := range sw.Meters() {
		if m.Direct() {
			continue
		}
		for i := 0; i < m.Size(); i++ {
			if c := m.Rates(i); c != nil {
				cmd := fmt.Sprintf("meter_set_rates %s %d %s:%d %s:%d", m.Name, i,
					strconv.FormatFloat(c.CIR, 'g', -1, 64), c.CBS, strconv.FormatFloat(c.PIR, 'g', -1, 64), c.PBS)
				if _, err := s.CLI(cmd); err != nil {
					return err
				}
			}
		}
	}
	ids := make([]int, 0)
	sessions := sw.CloneSessions()
	for id := range sessions {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		if sess := sessions[id]; sess.HasPort {
			_, _ = s.CLI(fmt.Sprintf("mirroring_delete %d", id))
			if _, err := s.CLI(fmt.Sprintf("mirroring_add %d %d", id, sess.Port)); err != nil {
				return err
			}
		}
	}
	for _, r := range sw.Registers() {
		if _, err := s.CLI("register_reset " + r.Name); err != nil {
			return err
		}
		for i := 0; i < r.Size(); i++ {
			v, err := r.Read(i)
			if err != nil {
				return err
			}
			x := new(big.Int).SetBytes(v)
			if x.Sign() != 0 {
				if _, err := s.CLI(fmt.Sprintf("register_write %s %d %s", r.Name, i, x)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
