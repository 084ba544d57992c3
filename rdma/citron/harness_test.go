package citron

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/netlock-go/netlock/rdma/emu"
	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// seedOf returns the seed of a randomized test: RDMA_SEED if set, else base.
func seedOf(t *testing.T, base int64) int64 {
	if s := os.Getenv("RDMA_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("RDMA_SEED: %v", err)
		}
		return v
	}
	return base
}

// oracle is the range-exclusion checker: every grant is checked against the locks held at that
// moment (no two overlapping exclusive ranges, no exclusive overlapping a shared one).
type oracle struct {
	mu         sync.Mutex
	held       map[int]lockRec
	next       int
	grants     int
	violations int
	first      string
}

type lockRec struct {
	start, end uint64
	mode       Mode
	who        int
	until      int64 // a crashed holder's lock is void once its lease ran out
}

func newOracle() *oracle { return &oracle{held: map[int]lockRec{}} }

func (o *oracle) grant(who int, start, end uint64, mode Mode) int {
	return o.grantAt(who, start, end, mode, 0, 1<<62)
}

// grantAt records a grant at time now valid until until (a crashing holder's lease end).
func (o *oracle) grantAt(who int, start, end uint64, mode Mode, now, until int64) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.grants++
	for _, r := range o.held {
		if r.until < now {
			continue
		}
		if r.start < end && start < r.end && (r.mode == Exclusive || mode == Exclusive) {
			o.violations++
			if o.first == "" {
				o.first = fmt.Sprintf("client %d got [%d,%d) %v while client %d holds [%d,%d) %v", who, start, end, mode, r.who, r.start, r.end, r.mode)
			}
		}
	}
	o.next++
	o.held[o.next] = lockRec{start, end, mode, who, until}
	return o.next
}

func (o *oracle) release(id int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.held, id)
}

// dataCheck is the second, physical detector: a word per unit on the server. An exclusive
// holder reads its range and writes it back incremented after a pause (lost updates if two
// exclusive holders overlap); a shared holder reads its range twice around a pause and must see
// no change. Expected totals are kept in Go.
type dataCheck struct {
	base  verbs.Ptr
	units uint64
	mu    sync.Mutex
	want  []uint64
	torn  int
}

func newDataCheck(ep verbs.Endpoint, units uint64) (*dataCheck, error) {
	p, err := ep.Alloc(units * 8)
	if err != nil {
		return nil, err
	}
	return &dataCheck{base: p, units: units, want: make([]uint64, units)}, nil
}

func (d *dataCheck) cs(ep verbs.Endpoint, start, end uint64, mode Mode, pause func()) error {
	end = min(end, d.units)
	if start >= end {
		if pause != nil {
			pause()
		}
		return nil
	}
	var vals []uint64
	for s := start; s < end; s += verbs.MaxWords {
		w, err := verbs.ReadWords(ep, d.base.Add(8*s), int(min(end-s, verbs.MaxWords)))
		if err != nil {
			return err
		}
		vals = append(vals, w...)
	}
	if pause != nil {
		pause()
	}
	if mode == Shared {
		for s := start; s < end; s += verbs.MaxWords {
			w, err := verbs.ReadWords(ep, d.base.Add(8*s), int(min(end-s, verbs.MaxWords)))
			if err != nil {
				return err
			}
			for i, v := range w {
				if v != vals[s-start+uint64(i)] {
					d.mu.Lock()
					d.torn++
					d.mu.Unlock()
					break
				}
			}
		}
		return nil
	}
	for i := range vals {
		vals[i]++
	}
	for s := start; s < end; s += verbs.MaxWords {
		if err := verbs.WriteWords(ep, d.base.Add(8*s), vals[s-start:s-start+min(end-s, verbs.MaxWords)]); err != nil {
			return err
		}
	}
	d.mu.Lock()
	for u := start; u < end; u++ {
		d.want[u]++
	}
	d.mu.Unlock()
	return nil
}

// verify compares the data words with the expected counts and returns the number of wrong units.
func (d *dataCheck) verify(ep verbs.Endpoint) (int, error) {
	bad := 0
	for s := uint64(0); s < d.units; s += verbs.MaxWords {
		w, err := verbs.ReadWords(ep, d.base.Add(8*s), int(min(d.units-s, verbs.MaxWords)))
		if err != nil {
			return 0, err
		}
		for i, v := range w {
			if v != d.want[s+uint64(i)] {
				bad++
			}
		}
	}
	return bad + d.torn, nil
}

// workload is a randomized range-lock workload.
type workload struct {
	clients    int
	ops        int
	maxLen     uint64  // range lengths: 1..maxLen (log-uniform)
	sharedFrac float64 // probability a request is shared
	hot        uint64  // starts uniform in [0, hot) (contention)
	space      uint64
	seed       int64
	k          int
	slow       bool
	csPause    func(ep verbs.Endpoint)
}

func (w workload) request(rng *rand.Rand) (uint64, uint64, Mode) {
	var L uint64 = 1
	if w.maxLen > 1 {
		bits := rng.Intn(64 - countLeadingZeros(w.maxLen))
		L = 1 + uint64(rng.Int63n(int64(min(w.maxLen, uint64(1)<<bits))))
	}
	start := uint64(rng.Int63n(int64(w.hot)))
	end := min(start+L, w.space)
	mode := Exclusive
	if rng.Float64() < w.sharedFrac {
		mode = Shared
	}
	return start, end, mode
}

func countLeadingZeros(x uint64) int {
	n := 0
	for i := 63; i >= 0 && x>>uint(i)&1 == 0; i-- {
		n++
	}
	return n
}

// runClient performs w.ops lock/CS/unlock cycles with client id on ep. A client whose options
// make it crash (crashAt) stops there and returns errCrashed; one told to crash "holding" stops
// inside its critical section.
func runClient(ctx context.Context, ep verbs.Endpoint, dir Directory, w workload, id int, o *oracle, dc *dataCheck, opt ClientOptions) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crashed); !ok {
				panic(r)
			}
			err = errCrashed
		}
	}()
	if opt.K == 0 {
		opt.K = w.k
	}
	opt.SlowPath = opt.SlowPath || w.slow
	c, err := NewClient(ep, dir, opt)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewSource(w.seed*1000 + int64(id)))
	for i := 0; i < w.ops; i++ {
		s, e, m := w.request(rng)
		h, err := c.LockRange(ctx, s, e, m)
		if err != nil {
			return fmt.Errorf("client %d op %d [%d,%d) %v: %w", id, i, s, e, m, err)
		}
		rid := o.grantAt(id, s, e, m, ep.Now(), 1<<62)
		if opt.crashAt != nil && opt.crashAt("holding") {
			return errCrashed // never released: its lease runs out
		}
		var pause func()
		if w.csPause != nil {
			pause = func() { w.csPause(ep) }
		}
		if dc != nil {
			if err := dc.cs(ep, s, e, m, pause); err != nil {
				return err
			}
		} else if pause != nil {
			pause()
		}
		o.release(rid)
		if err := h.Unlock(); err != nil {
			return fmt.Errorf("client %d op %d unlock: %w", id, i, err)
		}
	}
	return nil
}

var errCrashed = errors.New("client crashed (test)")

// quiescent checks the invariants that hold when no request is in flight: every leaf and every
// shared count is zero, every internal node is unoccupied with balanced counter pairs, and the
// spillover lock is free. It returns a description of the first violation ("" if none).
func quiescent(ep verbs.Endpoint, s *Server) (string, error) {
	info, err := s.Info(ep)
	if err != nil {
		return "", err
	}
	l := info.Layout
	H := l.Height()
	for d := 0; d <= H; d++ {
		for _, f := range l.fragments(d, 0, levelNodes(d)) {
			for off := uint64(0); off < f.count; off += wordsLimit / slotWords {
				k := min(f.count-off, wordsLimit/slotWords)
				ws, err := verbs.ReadWords(ep, f.ptr.Add(off*slotBytes), int(k*slotWords))
				if err != nil {
					return "", err
				}
				for i := uint64(0); i < k; i++ {
					n := node{d, f.first + off + i}
					e, sw := ws[2*i], ws[2*i+1]
					if d == H {
						if e != 0 || sw != 0 {
							return fmt.Sprintf("leaf %v: bits %#x shared counts %#x", n, e, sw), nil
						}
						continue
					}
					if fOcc.Get(e) != 0 || fTCnt.Get(e) != fTMax.Get(e) || fDCnt.Get(e) != fDMax.Get(e) ||
						fSOcc.Get(sw) != 0 || fDCnt.Get(sw) != fDMax.Get(sw) {
						return fmt.Sprintf("node %v: E %#x (occ %d tcnt %d tmax %d dcnt %d dmax %d) S %#x (socc %d dcnt %d dmax %d)", n, e,
							fOcc.Get(e), fTCnt.Get(e), fTMax.Get(e), fDCnt.Get(e), fDMax.Get(e), sw, fSOcc.Get(sw), fDCnt.Get(sw), fDMax.Get(sw)), nil
					}
				}
			}
		}
	}
	sp, err := verbs.Read(ep, s.Control().Add(ctlSpill))
	if err != nil {
		return "", err
	}
	if fXCnt.Get(sp) != fXMax.Get(sp) || fSCnt.Get(sp) != fSMax.Get(sp) {
		return fmt.Sprintf("spillover lock %#x", sp), nil
	}
	return "", nil
}

// simRun runs w on rdma/sim: node 0 is the lock server, clients spread over nodes 1..nodes-1.
type simSetup struct {
	cfg      Config
	cost     sim.Cost
	nodes    int
	jitter   int64
	opts     func(id int) ClientOptions
	data     bool
	until    int64
	extra    func(s *sim.Sim, dir Directory) // more threads (scalers, killers)
	dirCPU   int64
	regionMB uint64
}

type simResult struct {
	o        *oracle
	bad      int
	quiet    string
	end      int64
	stats    []*Stats
	finished int
	crashed  int
}

func runSim(t *testing.T, w workload, st simSetup) simResult {
	t.Helper()
	if st.nodes == 0 {
		st.nodes = 3
	}
	if st.until == 0 {
		st.until = 2e9
	}
	region := max(st.regionMB, 8) << 20
	s, err := sim.New(sim.Config{Nodes: st.nodes, RegionSize: region, Cost: st.cost, Seed: w.seed, OpJitter: st.jitter})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(s.Endpoint(0), st.cfg)
	if err != nil {
		t.Fatal(err)
	}
	var dir Directory = srv
	if st.dirCPU > 0 {
		dir = SimDirectory(s, srv, 0, st.dirCPU)
	}
	var dc *dataCheck
	if st.data {
		if dc, err = newDataCheck(s.Endpoint(0), min(w.space, 1<<15)); err != nil {
			t.Fatal(err)
		}
	}
	o := newOracle()
	res := simResult{o: o}
	stats := make([]*Stats, w.clients)
	for i := 0; i < w.clients; i++ {
		id := i
		opt := ClientOptions{}
		if st.opts != nil {
			opt = st.opts(id)
		}
		s.Go(1+i%(st.nodes-1), func(ep verbs.Endpoint) error {
			probe := opt.Probe
			opt.Probe = probe
			err := runClient(context.Background(), ep, dir, w, id, o, dc, opt)
			if errors.Is(err, errCrashed) {
				res.crashed++
				return nil
			}
			if err == nil {
				res.finished++
			}
			return err
		})
	}
	if st.extra != nil {
		st.extra(s, dir)
	}
	if err := s.Run(st.until); err != nil {
		t.Fatalf("seed %d: %v", w.seed, err)
	}
	res.end = s.Now()
	res.stats = stats
	if dc != nil {
		if res.bad, err = dc.verify(s.Endpoint(0)); err != nil {
			t.Fatal(err)
		}
	}
	if res.finished == w.clients {
		if res.quiet, err = quiescent(s.Endpoint(0), srv); err != nil {
			t.Fatal(err)
		}
	}
	return res
}

// runEmu runs w on rdma/emu in real time with the same layout of nodes.
func runEmu(t *testing.T, w workload, cfg Config, ecfg emu.Config, nodes int, data bool) simResult {
	t.Helper()
	if ecfg.RegionSize == 0 {
		ecfg.RegionSize = 8 << 20
	}
	cl, err := emu.NewCluster(ecfg, nodes)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	srv, err := NewServer(cl.Node(0).NewEndpoint(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var dc *dataCheck
	if data {
		if dc, err = newDataCheck(cl.Node(0).NewEndpoint(), min(w.space, 1<<15)); err != nil {
			t.Fatal(err)
		}
	}
	o := newOracle()
	var wg sync.WaitGroup
	errs := make(chan error, w.clients)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := 0; i < w.clients; i++ {
		ep := cl.Node(1 + i%(nodes-1)).NewEndpoint()
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			errs <- runClient(ctx, ep, srv, w, id, o, dc, ClientOptions{})
		}(i)
	}
	wg.Wait()
	close(errs)
	res := simResult{o: o}
	for err := range errs {
		if err != nil {
			t.Fatalf("seed %d: %v", w.seed, err)
		}
		res.finished++
	}
	if dc != nil {
		if res.bad, err = dc.verify(cl.Node(0).NewEndpoint()); err != nil {
			t.Fatal(err)
		}
	}
	if res.quiet, err = quiescent(cl.Node(0).NewEndpoint(), srv); err != nil {
		t.Fatal(err)
	}
	return res
}
