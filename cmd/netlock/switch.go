package main

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/spf13/cobra"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/bmv2/p4rt"
	"github.com/netlock-go/netlock/bmv2/port"
	"github.com/netlock-go/netlock/bmv2/target"
	"github.com/netlock-go/netlock/internal/tlsconf"
	"github.com/netlock-go/netlock/wire"
)

func init() { addCommand(newSwitchCommand()) }

// switchConfig is the command line of netlock switch.
type switchConfig struct {
	program    string
	noP4       bool
	ifaces     []string // -i N@IFACE
	udpPorts   []string // --udp-port N@LOCAL[,REMOTE]
	deviceID   uint64
	grpcAddr   string
	cpuPort    int
	logConsole bool
	pcapDir    string
	thriftPort int
	tofino     bool
	pipes      int   // --pipes: the chip's pipes, for TNA programs
	loopback   []int // --loopback-port
	pipeline   string
	logFile    string
	logLevel   string
	nanolog    string
	debugger   bool
	// the bounds of hostile programs (issue 18 item 5; docs/p4.md, "Bounds")
	maxNesting  int
	memoryLimit string
	// simple_switch_grpc's TLS flags
	grpcSSL, grpcClientAuth       bool
	grpcCACert, grpcCert, grpcKey string
}

// newSwitchCommand builds the command; tests build a fresh one per run, as
// flag values stick to a command.
func newSwitchCommand() *cobra.Command {
	var c switchConfig
	cmd := &cobra.Command{
		Use:   "switch [flags] (PROGRAM.p4 | --no-p4) [-- target flags]",
		Short: "Software P4 switch with a P4Runtime server, command line compatible with simple_switch_grpc",
		Long: `netlock switch runs a v1model or TNA (Tofino) P4 program on netlock's execution engine
and serves P4Runtime (gRPC) for it, taking simple_switch_grpc's command line where it
applies. The architecture follows from the program (#include <tna.p4> and Switch(...) main).

The program argument is P4 source (simple_switch_grpc takes bmv2 JSON). Given a
FILE.json, the switch runs FILE.p4 from the same directory if it exists, else
from the parent directory (p4c-bm2-ss writes build/FILE.json for FILE.p4). The
P4Runtime device config a controller pushes is P4 source too (a p4rt bundle).

As with simple_switch_grpc, flags after "--" are target flags; netlock switch
accepts every flag on either side. --thrift-port is accepted and ignored: there
is no Thrift runtime, use P4Runtime.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// simple_switch_grpc takes its gRPC flags after "--"; parse them here.
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				post := args[dash:]
				args = args[:dash]
				if err := cmd.Flags().Parse(post); err != nil {
					return err
				}
				args = append(args, cmd.Flags().Args()...)
			}
			switch {
			case len(args) > 1:
				return fmt.Errorf("one program argument expected, got %q", args)
			case len(args) == 1 && c.noP4:
				return errors.New("--no-p4 and a program argument exclude each other")
			case len(args) == 0 && !c.noP4:
				return errors.New("a program argument (FILE.p4) or --no-p4 is required")
			case len(args) == 1:
				c.program = args[0]
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runSwitch(ctx, c, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.BoolVar(&c.noP4, "no-p4", false, "start without a program (a controller pushes one over P4Runtime)")
	f.StringArrayVarP(&c.ifaces, "interface", "i", nil, "attach network interface IFACE as port N (AF_PACKET, needs CAP_NET_RAW), N@IFACE")
	f.StringArrayVar(&c.udpPorts, "udp-port", nil, "UDP-tunnel port N bound to LOCAL, sending to REMOTE (learned from the first datagram if left out), N@LOCAL[,REMOTE]")
	f.Uint64Var(&c.deviceID, "device-id", 0, "P4Runtime device id")
	f.StringVar(&c.grpcAddr, "grpc-server-addr", p4rt.DefaultAddr, "P4Runtime gRPC server address")
	f.IntVar(&c.cpuPort, "cpu-port", 0, "CPU port for packet-in/packet-out (0: none)")
	f.BoolVar(&c.logConsole, "log-console", false, "log every packet event (received, transmitted, dropped, packet-in, digests) to stdout")
	f.StringVar(&c.pcapDir, "pcap", "", "write <port>_in.pcap and <port>_out.pcap for every port to DIR")
	f.IntVar(&c.thriftPort, "thrift-port", 0, "accepted for simple_switch_grpc compatibility and ignored (no Thrift runtime)")
	f.BoolVar(&c.tofino, "tofino-constraints", false, "fail a packet that accesses one register array twice in a pass (Tofino; always on for TNA programs)")
	f.IntVar(&c.pipes, "pipes", 0, "the pipes of the Tofino chip a TNA program runs on: 0 or 1 (one pipe holds every port), 2 or 4 (port p in pipe p>>7, each pipe its own copy of the program's state); a program of several Pipelines, as p4/tna/netlock.p4's Tofino 1 fold (NETLOCK_FOLD), needs one pipe each")
	f.IntSliceVar(&c.loopback, "loopback-port", nil, "a port in loopback mode for a TNA program (a packet sent out of it comes back in on it, as Tofino recirculates), repeatable; default 68 alone (the fold needs 68 and 196)")
	f.StringVar(&c.pipeline, "pipeline", "auto", "what runs the program: auto (p4/netlock.p4's generated Go pipeline, which this binary links, for p4/netlock.p4 with any -D sizing; the interpreter for any other program), interp, or gen (fail for another program)")
	f.StringVar(&c.logFile, "log-file", "", "log packet events as --log-console does, to FILE")
	f.StringVarP(&c.logLevel, "log-level", "L", "", "bmv2 log level; \"off\" disables --log-console and --log-file, any other level logs the same events")
	f.StringVar(&c.nanolog, "nanolog", "", "accepted for simple_switch_grpc compatibility and ignored (no nanomsg event log)")
	f.BoolVar(&c.debugger, "debugger", false, "accepted for simple_switch_grpc compatibility and ignored (no bmv2 debugger)")
	f.IntVar(&c.maxNesting, "max-nesting", front.DefaultMaxNesting, fmt.Sprintf("refuse a program (the argument or a pushed pipeline, INVALID_ARGUMENT) nested deeper than this: expressions, statements, types, macros; 1..%d", maxNestingFlag))
	f.StringVar(&c.memoryLimit, "memory-limit", fmt.Sprintf("%d%%", 100/engine.DefaultMemoryFraction), "refuse a pipeline (RESOURCE_EXHAUSTED) whose registers, counters, meters and table entries need more memory: N% of the machine's memory (the smaller of MemTotal and the cgroup's memory.max), bytes with an optional unit (256MiB, 2GB), or none")
	f.BoolVar(&c.grpcSSL, "grpc-server-ssl", false, "serve P4Runtime over TLS (--grpc-server-cert, --grpc-server-key)")
	f.StringVar(&c.grpcCACert, "grpc-server-cacert", "", "PEM file of the CA that signs the controllers' client certificates")
	f.StringVar(&c.grpcCert, "grpc-server-cert", "", "PEM file of the server certificate")
	f.StringVar(&c.grpcKey, "grpc-server-key", "", "PEM file of the server key")
	f.BoolVar(&c.grpcClientAuth, "grpc-server-with-client-auth", false, "require a client certificate signed by --grpc-server-cacert (mutual TLS): only its holders may connect, become primary, write, and read secrets")
	return cmd
}

// maxNestingFlag is the largest --max-nesting: the engine's compiler recurses once per level of a
// program, and 4096 levels stay far inside the goroutine stack's 1 GB (TestSwitchMaxNestingFlag
// loads a program this deep).
const maxNestingFlag = 4096

// bounds checks --max-nesting and reads --memory-limit (engine.Config.MemoryLimit's bytes, -1 for
// none).
func (c *switchConfig) bounds() (int64, error) {
	if c.maxNesting < 1 || c.maxNesting > maxNestingFlag {
		return 0, fmt.Errorf("--max-nesting %d: want 1..%d", c.maxNesting, maxNestingFlag)
	}
	mem, err := engine.ParseMemoryLimit(c.memoryLimit, engine.MachineMemory())
	if err != nil {
		return 0, fmt.Errorf("--memory-limit: %w", err)
	}
	return mem, nil
}

// syncWriter serializes writes from the packet loop, the gRPC server and the command.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) printf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, format, args...)
}

// logLine prints one log line in bmv2's console format.
func (s *syncWriter) logLine(msg string) {
	s.printf("[%s] [netlock] [D] [cxt 0] %s\n", time.Now().Format("15:04:05.000"), msg)
}

// programPath resolves the program argument: P4 source, or the P4 source of a bmv2 JSON.
func programPath(arg string) (string, error) {
	if !strings.HasSuffix(arg, ".json") {
		return arg, nil
	}
	base := strings.TrimSuffix(filepath.Base(arg), ".json") + ".p4"
	for _, dir := range []string{filepath.Dir(arg), filepath.Dir(filepath.Dir(arg))} {
		p := filepath.Join(dir, base)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: netlock switch runs P4 source, not bmv2 JSON, and found no %s next to it or in its parent directory", arg, base)
}

// switchPort is one port to open.
type switchPort struct {
	num  int
	name string // for pcap file names
	open func() (port.Port, string, error)
}

func switchPorts(c switchConfig) ([]switchPort, error) {
	var out []switchPort
	for _, s := range c.ifaces {
		num, iface, err := port.ParseIfaceSpec(s)
		if err != nil {
			return nil, err
		}
		out = append(out, switchPort{num: int(num), name: iface, open: func() (port.Port, string, error) {
			p, err := port.OpenRaw(iface)
			if err != nil {
				return nil, "", err
			}
			return p, fmt.Sprintf("Adding interface %s as port %d", iface, num), nil
		}})
	}
	for _, s := range c.udpPorts {
		sp, err := port.ParseUDPSpec(s)
		if err != nil {
			return nil, err
		}
		out = append(out, switchPort{num: int(sp.Num), name: fmt.Sprintf("port%d", sp.Num), open: func() (port.Port, string, error) {
			p, err := port.ListenUDP(sp)
			if err != nil {
				return nil, "", err
			}
			remote := "learned from the first datagram"
			if sp.Remote.IsValid() {
				remote = sp.Remote.String()
			}
			return p, fmt.Sprintf("Adding UDP tunnel port %d on %s, peer %s", sp.Num, p.LocalAddr(), remote), nil
		}})
	}
	return out, nil
}

// withPcap wraps p with bmv2-style capture files in dir.
func withPcap(p port.Port, dir, name string) (port.Port, error) {
	in, err := os.Create(filepath.Join(dir, name+"_in.pcap"))
	if err != nil {
		return nil, err
	}
	out, err := os.Create(filepath.Join(dir, name+"_out.pcap"))
	if err != nil {
		in.Close()
		return nil, err
	}
	cp, err := port.WithCaptureSplit(p, in, out)
	if err != nil {
		in.Close()
		out.Close()
		return nil, err
	}
	return cp, nil
}

// runSwitch runs the switch until ctx ends.
func runSwitch(ctx context.Context, c switchConfig, stdout io.Writer) error {
	w := &syncWriter{w: stdout}
	pl, err := engine.ParsePipeline(c.pipeline)
	if err != nil {
		return err
	}
	memLimit, err := c.bounds()
	if err != nil {
		return err
	}
	switch c.pipes {
	case 0, 1, 2, 4:
	default:
		return fmt.Errorf("--pipes %d: want 1, 2 or 4 (0: one)", c.pipes)
	}
	for _, p := range c.loopback {
		if p < 0 || p > 510 {
			return fmt.Errorf("--loopback-port %d: want 0..510", p)
		}
	}
	opts := target.Options{CPUPort: c.cpuPort, TofinoConstraints: c.tofino, Pipeline: pl, Generated: netlockPipeline,
		MemoryLimit: memLimit, Pipes: c.pipes, Loopback: c.loopback}
	// Packet events go to stdout (--log-console), a file (--log-file) or both.
	var logw *syncWriter
	switch {
	case c.logLevel == "off":
	case c.logConsole && c.logFile == "":
		logw = w
	case c.logFile != "":
		f, err := os.Create(c.logFile)
		if err != nil {
			return err
		}
		defer f.Close()
		var dst io.Writer = f
		if c.logConsole {
			dst = io.MultiWriter(stdout, f)
		}
		logw = &syncWriter{w: dst}
	}
	if logw != nil {
		opts.Log = logw.logLine
	}
	var drops dropCounts
	opts.Drop = drops.count
	if c.thriftPort != 0 {
		w.printf("Ignoring --thrift-port %d: netlock switch has no Thrift runtime, use P4Runtime\n", c.thriftPort)
	}
	if c.nanolog != "" {
		w.printf("Ignoring --nanolog %s: netlock switch has no nanomsg event log\n", c.nanolog)
	}
	if c.debugger {
		w.printf("Ignoring --debugger: netlock switch has no bmv2 debugger\n")
	}
	if c.cpuPort < 0 || c.cpuPort >= 511 {
		return fmt.Errorf("--cpu-port %d: want 1..510 (0: none)", c.cpuPort)
	}
	var prog *front.Checked
	if !c.noP4 {
		path, err := programPath(c.program)
		if err != nil {
			return err
		}
		if path != c.program {
			w.printf("Running %s (P4 source of %s)\n", path, c.program)
		}
		if prog, err = front.LoadOptions(path, front.Options{MaxNesting: c.maxNesting}); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	specs, err := switchPorts(c)
	if err != nil {
		return err
	}
	if c.pcapDir != "" {
		if err := os.MkdirAll(c.pcapDir, 0o755); err != nil {
			return err
		}
	}

	dev := target.New(opts)
	defer dev.Close()
	if prog != nil {
		if err := dev.LoadProgram(prog); err != nil {
			return err
		}
		// What the running switch binds, not what the registry holds.
		if name := dev.GeneratedPipeline(); name != "" {
			w.printf("Pipeline: generated Go (%s)\n", name)
		} else {
			w.printf("Pipeline: interpreter\n")
		}
	}
	for _, sp := range specs {
		p, msg, err := sp.open()
		if err != nil {
			return err
		}
		if c.pcapDir != "" {
			cp, err := withPcap(p, c.pcapDir, sp.name)
			if err != nil {
				p.Close()
				return err
			}
			p = cp
		}
		if err := dev.AddPort(sp.num, p); err != nil {
			p.Close()
			return err
		}
		w.printf("%s\n", msg)
	}

	cfg := p4rt.Config{DeviceID: c.deviceID, Device: dev, MaxNesting: c.maxNesting}
	if logw != nil {
		cfg.Logf = func(format string, args ...any) { logw.logLine("p4runtime: " + fmt.Sprintf(format, args...)) }
	}
	srv, err := p4rt.NewServer(cfg)
	if err != nil {
		return err
	}
	gopts, err := c.grpcSecurity(w)
	if err != nil {
		srv.Close()
		return err
	}
	addr, stopServer, err := p4rt.Serve(c.grpcAddr, srv, gopts...)
	if err != nil {
		srv.Close()
		return err
	}
	dev.Start()
	mem := "none"
	if memLimit >= 0 {
		mem = fmt.Sprintf("%d bytes (--memory-limit %s)", memLimit, c.memoryLimit)
	}
	w.printf("Bounds: nesting %d levels, state memory %s\n", c.maxNesting, mem)
	w.printf("Server listening on %s\n", addr)

	<-ctx.Done()
	w.printf("Shutting down\n")
	stopServer()
	err = dev.Close()
	st := dev.Stats()
	w.printf("Switch stopped: %d frames received, %d transmitted, %d packet-ins, %d dropped, %d errors\n",
		st.Received, st.Transmitted, st.PacketIns, st.Dropped, st.Errors)
	drops.write(w)
	return err
}

// dropCounts counts the frames the switch dropped or failed on by reason and kind of frame
// (target.Options.Drop), for the summary printed when it stops.
type dropCounts struct {
	mu sync.Mutex
	n  map[dropKey]uint64 // guarded by mu
}

type dropKey struct {
	why  target.DropReason
	what string // the kind of frame, or the pipeline's error
}

// maxDropKeys bounds the distinct reasons kept; the rest are counted as "other".
const maxDropKeys = 32

func (d *dropCounts) count(why target.DropReason, _ int, frame []byte, err error) {
	k := dropKey{why, frameKind(frame)}
	if why == target.DropPipelineError && err != nil {
		msg := err.Error()
		if len(msg) > 120 {
			msg = msg[:120] + "..."
		}
		k.what = k.what + ": " + msg
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.n == nil {
		d.n = make(map[dropKey]uint64)
	}
	if _, ok := d.n[k]; !ok && len(d.n) >= maxDropKeys {
		k.what = "other"
	}
	d.n[k]++
}

// write prints, per reason, the number of frames and then one line per kind of frame, the most
// frequent first.
func (d *dropCounts) write(w *syncWriter) {
	d.mu.Lock()
	defer d.mu.Unlock()
	total := map[target.DropReason]uint64{}
	for k, n := range d.n {
		total[k.why] += n
	}
	whys := slices.SortedFunc(maps.Keys(total), func(a, b target.DropReason) int {
		if c := cmp.Compare(total[b], total[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	keys := slices.SortedFunc(maps.Keys(d.n), func(a, b dropKey) int {
		if c := cmp.Compare(d.n[b], d.n[a]); c != 0 {
			return c
		}
		return cmp.Compare(a.what, b.what)
	})
	for _, why := range whys {
		w.printf("  %d %s:\n", total[why], why)
		for _, k := range keys {
			if k.why == why {
				w.printf("  %8d %s\n", d.n[k], k.what)
			}
		}
	}
}

// lockKind names a lock protocol datagram by its op and flags: "lock protocol acquire
// (retransmission)".
func lockKind(payload []byte) string {
	h, err := wire.Parse(payload)
	if err != nil {
		return "lock protocol, malformed"
	}
	var f wire.Fields
	h.Decode(&f)
	kind := "lock protocol " + f.Op.String()
	if f.Flags&wire.FlagReply != 0 {
		kind += " reply"
	}
	if f.Flags&wire.FlagRetry != 0 {
		kind += " (retransmission)"
	}
	return kind
}

// frameKind names the kind of an Ethernet frame: the lock protocol (UDP port wire.Port) by op,
// other IPv4 by protocol, IPv6 (ICMPv6: the hosts' neighbour discovery and multicast listener
// reports), ARP, or its EtherType.
func frameKind(f []byte) string {
	if len(f) < 14 {
		return fmt.Sprintf("runt frame (%d bytes)", len(f))
	}
	switch et := binary.BigEndian.Uint16(f[12:14]); et {
	case 0x0800:
		ip := f[14:]
		if len(ip) < 20 {
			return "truncated IPv4"
		}
		ihl := int(ip[0]&0x0f) * 4
		switch ip[9] {
		case 17:
			if len(ip) >= ihl+8 && ihl >= 20 {
				if dst := binary.BigEndian.Uint16(ip[ihl+2:]); dst == wire.Port {
					return lockKind(ip[ihl+8:])
				}
			}
			return "IPv4 UDP"
		case 6:
			return "IPv4 TCP"
		case 1:
			return "IPv4 ICMP"
		}
		return fmt.Sprintf("IPv4 protocol %d", ip[9])
	case 0x86dd:
		if len(f) >= 14+40 && f[14+6] == 58 {
			return "IPv6 ICMPv6 (neighbour discovery, multicast listener reports)"
		}
		return "IPv6"
	case 0x0806:
		return "ARP"
	default:
		return fmt.Sprintf("EtherType %#04x", et)
	}
}

// grpcSecurity returns the gRPC server options of simple_switch_grpc's TLS flags, and warns
// loudly when the P4Runtime port is reachable beyond loopback by clients it cannot tell apart:
// whoever connects first with the highest election id is primary and writes the rack key.
func (c *switchConfig) grpcSecurity(w *syncWriter) ([]grpc.ServerOption, error) {
	if !c.grpcSSL {
		if c.grpcCACert != "" || c.grpcCert != "" || c.grpcKey != "" || c.grpcClientAuth {
			return nil, errors.New("--grpc-server-cacert, --grpc-server-cert, --grpc-server-key and " +
				"--grpc-server-with-client-auth need --grpc-server-ssl")
		}
		if !tlsconf.Loopback(c.grpcAddr) {
			w.printf("WARNING: P4Runtime on %s without TLS: anyone who reaches this port can take primacy, rewrite "+
				"the tables and the rack key, and forge lock traffic. Listen on 127.0.0.1, or use --grpc-server-ssl "+
				"with --grpc-server-with-client-auth (docs/reliability.md)\n", c.grpcAddr)
		}
		return nil, nil
	}
	tc, err := tlsconf.Server(c.grpcCert, c.grpcKey, c.grpcCACert, c.grpcClientAuth)
	if err != nil {
		return nil, err
	}
	if !c.grpcClientAuth && !tlsconf.Loopback(c.grpcAddr) {
		w.printf("WARNING: P4Runtime on %s with TLS but without --grpc-server-with-client-auth: any client that "+
			"reaches this port can take primacy and rewrite the rack key\n", c.grpcAddr)
	}
	return []grpc.ServerOption{grpc.Creds(credentials.NewTLS(tc))}, nil
}
