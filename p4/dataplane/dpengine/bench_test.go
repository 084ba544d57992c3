package dpengine

import (
	"encoding/binary"
	"net/netip"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// pairBench drives uncontended exclusive acquire+release pairs through p4/netlock.p4 on the
// engine (Tofino-constraint mode off, as netlock switch runs by default): the work of
// lockcore.Pairs, as lock packets in frames. Each pair is two packets in and two answers out.
type pairBench struct {
	sw        *Switch
	acq, rel  []byte
	nlocks    uint32
	txn       uint64
	clientPrt int
}

const benchLocks = 64

func newPairBench(tb testing.TB, tofino bool, pl engine.Pipeline) *pairBench {
	now := time.Unix(1000, 0)
	sw, err := Load(dataplane.Sizing{Locks: benchLocks, PartBits: 8}, pipelineConfig(engine.Config{TofinoConstraints: tofino,
		Now: func() time.Time { return now }}, pl))
	if err != nil {
		tb.Fatal(err)
	}
	must(tb, sw.SetRack(dataplane.Rack{Key: rigKey, SwitchIP: netip.MustParseAddr("10.0.0.1"), SwitchMAC: rigSwitchMAC,
		DefaultLease: 10 * time.Second, MaxLease: 60 * time.Second}))
	srv, cli := serverAddr(1), clientAddr(1)
	must(tb, sw.SetServer(1, dataplane.Server{Addr: srv, Port: 101, MAC: hostMAC(srv.Addr())}))
	must(tb, sw.AddRoute(netip.PrefixFrom(cli.Addr(), 32), dataplane.NextHop{SrcMAC: rigSwitchMAC, DstMAC: hostMAC(cli.Addr()), Port: 1}))
	for l := uint32(0); l < benchLocks; l++ {
		must(tb, sw.SetLock(dataplane.LockEntry{Lock: l, Index: l, Server: 1,
			Regions: [dataplane.Levels]dataplane.Region{{Left: 4 * l, Size: 2}, {Left: 4*l + 2, Size: 2}}}))
	}
	b := &pairBench{sw: sw, nlocks: benchLocks, clientPrt: 1}
	src := udpframe.Endpoint{MAC: hostMAC(cli.Addr()), Addr: cli}
	dst := udpframe.Endpoint{MAC: rigSwitchMAC, Addr: srv}
	b.acq = udpframe.AppendNoChecksum(nil, src, dst, wire.Append(nil, &wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Txn: 1}))
	b.rel = udpframe.AppendNoChecksum(nil, src, dst, wire.Append(nil, &wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive, Txn: 1}))
	return b
}

// Offsets of netlock fields in a frame.
const (
	fLock  = udpframe.HeaderLen + 8
	fTxn   = udpframe.HeaderLen + 12
	fToken = udpframe.HeaderLen + 20
	fOp    = udpframe.HeaderLen + 1
)

// pair runs one acquire and its release; it panics if they are not a grant and an ack.
func (b *pairBench) pair() {
	b.txn++
	lock := uint32(b.txn) % b.nlocks
	binary.BigEndian.PutUint32(b.acq[fLock:], lock)
	binary.BigEndian.PutUint64(b.acq[fTxn:], b.txn)
	res, err := b.sw.Process(b.clientPrt, b.acq)
	if err != nil || len(res.Out) != 1 || res.Out[0].Data[fOp] != byte(wire.OpGrant) {
		panic("dataplane bench: the acquire was not granted")
	}
	token := binary.BigEndian.Uint64(res.Out[0].Data[fToken:])
	binary.BigEndian.PutUint32(b.rel[fLock:], lock)
	binary.BigEndian.PutUint64(b.rel[fTxn:], b.txn)
	binary.BigEndian.PutUint64(b.rel[fToken:], token)
	res, err = b.sw.Process(b.clientPrt, b.rel)
	if err != nil || len(res.Out) != 1 || res.Out[0].Data[fOp] != byte(wire.OpRelease) {
		panic("dataplane bench: the release was not acknowledged")
	}
}

// cpuTime is the CPU time this process used (user and system): under a loaded machine a
// rate per CPU second is steadier than one per wall-clock second.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// framePairs is the reference of BenchmarkSwitchPairs: the same pairs, as the same frames,
// through lockcore with the work a host does around it (parse the frame, decode the header,
// step the core, encode the answer and its frame).
type framePairs struct {
	core     *lockcore.Core
	acq, rel []byte
	out      []lockcore.Effect
	ans      []byte
	req      lockcore.Request
	fr       udpframe.Frame
	txn      uint64
}

func newFramePairs(tb testing.TB, pb *pairBench) *framePairs {
	c, err := lockcore.New(lockcore.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	return &framePairs{core: c, acq: slices.Clone(pb.acq), rel: slices.Clone(pb.rel),
		out: make([]lockcore.Effect, 0, 8), ans: make([]byte, 0, 128)}
}

func (f *framePairs) step(frame []byte) *wire.Fields {
	if err := udpframe.Parse(frame, &f.fr); err != nil {
		panic(err)
	}
	h, err := wire.Parse(f.fr.Payload)
	if err != nil {
		panic(err)
	}
	h.Decode(&f.req.Fields)
	f.req.From = f.fr.Src
	f.out = f.core.Step(1e9, &f.req, f.out[:0])
	if len(f.out) != 1 {
		panic("dataplane bench: lockcore did not answer once")
	}
	e := &f.out[0]
	f.ans = udpframe.AppendNoChecksum(f.ans[:0], udpframe.Endpoint{MAC: f.fr.DstMAC, Addr: f.fr.Dst},
		udpframe.Endpoint{MAC: f.fr.SrcMAC, Addr: e.To}, wire.Append(f.ans[udpframe.HeaderLen:udpframe.HeaderLen], &e.Msg))
	return &e.Msg
}

func (f *framePairs) pair(nlocks uint32) {
	f.txn++
	lock := uint32(f.txn) % nlocks
	binary.BigEndian.PutUint32(f.acq[fLock:], lock)
	binary.BigEndian.PutUint64(f.acq[fTxn:], f.txn)
	m := f.step(f.acq)
	if m.Op != wire.OpGrant {
		panic("dataplane bench: lockcore did not grant")
	}
	binary.BigEndian.PutUint32(f.rel[fLock:], lock)
	binary.BigEndian.PutUint64(f.rel[fTxn:], f.txn)
	binary.BigEndian.PutUint64(f.rel[fToken:], m.Token)
	if m = f.step(f.rel); m.Op != wire.OpRelease {
		panic("dataplane bench: lockcore did not acknowledge")
	}
}

// BenchmarkSwitchPairs: lock packets (acquires and releases, uncontended, exclusive, over 64
// locks) per second through p4/netlock.p4 on the engine on one core, in memory, and the ratio
// to lockcore doing the same pairs from the same frames in the same run (framePairs).
// Metrics: lockpkts/s (wall clock), lockpkts/cpu-s (CPU time of the process: steadier on a
// loaded machine), x_lockcore (the switch's rate per CPU second over lockcore's), and
// core_pairs/cpu-s: lockcore's own benchmark (lockcore.Pairs, the unit of its 10 M pairs/s
// target) in the same run, the yardstick of the core the figures were taken on (the 1 M lock
// packets/s target of the switch and the 10 M pairs/s of the core assume the same core).
//
// Sub-benchmarks: interp (the interpreter) and gen (the generated pipeline, p4/netlockgen).
func BenchmarkSwitchPairs(b *testing.B) {
	for _, pl := range benchPipelines {
		b.Run(pl.String(), func(b *testing.B) { benchSwitchPairs(b, pl) })
	}
}

// benchPipelines are the pipelines the benchmarks and TestSwitchPairAllocs run.
var benchPipelines = []engine.Pipeline{engine.PipelineInterpreted, engine.PipelineGenerated}

func benchSwitchPairs(b *testing.B, pl engine.Pipeline) {
	pb := newPairBench(b, false, pl)
	ref := newFramePairs(b, pb)
	for i := 0; i < 1000; i++ {
		pb.pair()
		ref.pair(pb.nlocks)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		pb.pair()
	}
	cpuSwitch := cpuTime() - cpu0
	b.StopTimer()
	cpu0 = cpuTime()
	for i := 0; i < b.N; i++ {
		ref.pair(pb.nlocks)
	}
	cpuRef := cpuTime() - cpu0
	core, err := lockcore.New(lockcore.Config{})
	if err != nil {
		b.Fatal(err)
	}
	out := lockcore.Pairs(core, 4096, 1024, make([]lockcore.Effect, 0, 8)) // as BenchmarkAcquireRelease
	nCore := 10 * b.N
	cpu0 = cpuTime()
	lockcore.Pairs(core, nCore, 1024, out)
	cpuCore := cpuTime() - cpu0
	b.ReportMetric(float64(2*b.N)/b.Elapsed().Seconds(), "lockpkts/s")
	if cpuSwitch > 0 && cpuRef > 0 {
		b.ReportMetric(float64(2*b.N)/cpuSwitch.Seconds(), "lockpkts/cpu-s")
		b.ReportMetric(cpuRef.Seconds()/cpuSwitch.Seconds(), "x_lockcore")
	}
	if cpuCore > 0 {
		b.ReportMetric(float64(nCore)/cpuCore.Seconds(), "core_pairs/cpu-s")
	}
}

// BenchmarkSwitchRoute: an ordinary UDP frame routed by p4/netlock.p4 (ipv4_lpm), the floor
// of what a packet costs through the program on the engine.
func BenchmarkSwitchRoute(b *testing.B) {
	for _, pl := range benchPipelines {
		b.Run(pl.String(), func(b *testing.B) { benchSwitchRoute(b, pl) })
	}
}

func benchSwitchRoute(b *testing.B, pl engine.Pipeline) {
	pb := newPairBench(b, false, pl)
	src := udpframe.Endpoint{MAC: hostMAC(serverAddr(1).Addr()), Addr: netip.AddrPortFrom(serverAddr(1).Addr(), 7000)}
	dst := udpframe.Endpoint{MAC: rigSwitchMAC, Addr: netip.AddrPortFrom(clientAddr(1).Addr(), 7000)}
	frame := udpframe.AppendNoChecksum(nil, src, dst, make([]byte, 48))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		res, err := pb.sw.Process(2, frame)
		if err != nil || len(res.Out) != 1 {
			b.Fatalf("not routed: %v %v", res, err)
		}
	}
	cpu := cpuTime() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pkts/s")
	if cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "pkts/cpu-s")
	}
}

// TestSwitchPairAllocs: an acquire and a release through the program allocate nothing, on the
// interpreter (in Tofino-constraint mode) and on the generated pipeline.
func TestSwitchPairAllocs(t *testing.T) {
	for _, pl := range benchPipelines {
		t.Run(pl.String(), func(t *testing.T) {
			pb := newPairBench(t, pl == engine.PipelineInterpreted, pl)
			if got := pb.sw.GeneratedPipeline() != ""; got != (pl == engine.PipelineGenerated) {
				t.Fatalf("pipeline %v: generated pipeline bound = %v", pl, got)
			}
			for i := 0; i < 100; i++ {
				pb.pair()
			}
			if n := testing.AllocsPerRun(200, pb.pair); n != 0 {
				t.Errorf("%v allocations per acquire+release, want 0", n)
			}
		})
	}
}
