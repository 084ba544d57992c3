package lockcore

import (
	"math"
	"net/netip"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// BenchmarkAcquireRelease measures uncontended exclusive acquire+release pairs, the unit of the
// target in docs/targets.md (>= 10M pairs/s per core, 0 allocs/op), in the steady state: every
// release adds to a full replay memory (replay.go).
func BenchmarkAcquireRelease(b *testing.B) {
	c := mustCore(b, Config{})
	out := Pairs(c, steadyPairs, 1024, make([]Effect, 0, 8)) // warm the free list, the table, the replay memory
	b.ReportAllocs()
	b.ResetTimer()
	Pairs(c, b.N, 1024, out)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
}

// BenchmarkSharedContended measures a lock held shared by many txns while an exclusive waiter
// queues behind them and is granted when they leave: 16 shared acquires, 1 exclusive acquire,
// 16 shared releases, 1 exclusive release per iteration.
func BenchmarkSharedContended(b *testing.B) {
	c := mustCore(b, Config{})
	from := netip.MustParseAddrPort("10.0.0.1:5000")
	out := make([]Effect, 0, 64)
	r := &Request{From: from}
	var tokens [17]uint64
	b.ReportAllocs()
	b.ResetTimer()
	txn := uint64(1)
	for i := 0; i < b.N; i++ {
		base := txn
		r.Op, r.Lock, r.Token = wire.OpAcquire, 7, 0
		for k := 0; k < 17; k++ {
			r.Txn, r.Mode = txn, wire.Shared
			if k == 16 {
				r.Mode = wire.Exclusive
			}
			txn++
			out = c.Step(0, r, out[:0])
			if k < 16 {
				tokens[k] = out[0].Msg.Token
			}
		}
		r.Op = wire.OpRelease
		for k := 0; k < 16; k++ {
			r.Txn, r.Mode, r.Token = base+uint64(k), wire.Shared, tokens[k]
			out = c.Step(0, r, out[:0])
		}
		tokens[16] = out[len(out)-1].Msg.Token
		r.Txn, r.Mode, r.Token = base+16, wire.Exclusive, tokens[16]
		out = c.Step(0, r, out[:0])
	}
	b.ReportMetric(float64(b.N*34)/b.Elapsed().Seconds(), "ops/s")
}

// steadyPairs is enough pairs to reach a Core's steady state: its replay memory full.
const steadyPairs = DefaultReplayCapacity + 4096

func TestSteadyStateAllocs(t *testing.T) {
	c := mustCore(t, Config{})
	out := Pairs(c, steadyPairs, 1024, make([]Effect, 0, 8))
	if n := testing.AllocsPerRun(100, func() { out = Pairs(c, 64, 1024, out) }); n != 0 {
		t.Fatalf("acquire+release allocates %v times per 64 pairs, want 0", n)
	}
	var now int64
	if n := testing.AllocsPerRun(100, func() { now += int64(time.Millisecond); out = c.Expire(now, out[:0]) }); n != 0 {
		t.Fatalf("Expire allocates %v times, want 0", n)
	}
}

// TestStatsAdd: every field of Stats is summed (a field added to Stats and forgotten in Add would
// be missing from the lock server's totals).
func TestStatsAdd(t *testing.T) {
	var one Stats
	v := reflect.ValueOf(&one).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Array:
			for k := 0; k < f.Len(); k++ {
				f.Index(k).SetUint(1)
			}
		case reflect.Uint64:
			f.SetUint(1)
		case reflect.Int:
			f.SetInt(1)
		default:
			t.Fatalf("field %s of kind %s: extend this test", v.Type().Field(i).Name, f.Kind())
		}
	}
	var sum Stats
	sum.Add(&one)
	sum.Add(&one)
	s := reflect.ValueOf(sum)
	for i := 0; i < s.NumField(); i++ {
		f := s.Field(i)
		get := func(x reflect.Value) int64 {
			if x.Kind() == reflect.Int {
				return x.Int()
			}
			return int64(x.Uint())
		}
		if f.Kind() == reflect.Array {
			for k := 0; k < f.Len(); k++ {
				if get(f.Index(k)) != 2 {
					t.Fatalf("Add does not sum %s[%d]", s.Type().Field(i).Name, k)
				}
			}
		} else if get(f) != 2 {
			t.Fatalf("Add does not sum %s", s.Type().Field(i).Name)
		}
	}
}

// TestIdleStatesBounded: with overflow-only traffic (no lease ever runs, so nothing else makes
// the caller sweep) the states of 100k locks are freed once they have been idle for the
// retention: NextDeadline asks for the sweep, the table shrinks back, and at most maxFree states
// are kept for reuse.
func TestIdleStatesBounded(t *testing.T) {
	c := mustCore(t, Config{IdleRetention: 50 * time.Millisecond})
	sw := netip.MustParseAddrPort("10.1.0.1:8888")
	r := &Request{From: sw}
	r.Flags, r.Client, r.Mode = wire.FlagForwarded, netip.MustParseAddrPort("10.0.0.1:5000"), wire.Exclusive
	var out []Effect
	const n = 100_000
	for i := 0; i < n; i++ {
		r.Op, r.Lock, r.Txn = wire.OpOverflow, uint32(i), uint64(i+1)
		out = c.Step(int64(i), r, out[:0])
		r.Op, r.Slots = wire.OpQueueEmpty, 1
		if out = c.Step(int64(i), r, out[:0]); len(out) != 1 || out[0].Msg.Op != wire.OpPushBack {
			t.Fatalf("lock %d: %v", i, out)
		}
	}
	if st := c.Stats(); st.Locks != 0 || st.Idle != n || c.locks.n != n {
		t.Fatalf("after the burst: %+v, table %d", st, c.locks.n)
	}
	now := c.NextDeadline()
	if now != int64(50*time.Millisecond) {
		t.Fatalf("NextDeadline %v, want the first idle state's retention (50ms)", time.Duration(now))
	}
	for d := now; d != math.MaxInt64; d = c.NextDeadline() {
		out = c.Expire(d, out[:0])
	}
	if st := c.Stats(); st.Idle != 0 || c.locks.n != 0 || len(c.locks.vals) != minTable || len(c.free) > maxFree {
		t.Fatalf("after the retention: idle %d, table %d entries in %d slots, %d free states", st.Idle,
			c.locks.n, len(c.locks.vals), len(c.free))
	}
}

// BenchmarkMemory measures the heap a Core uses per lock state (a lock held by one exclusive
// holder, its state, table slot and deadline-heap slot), per additional waiter and per
// additional shared holder of a lock (with the lock's membership index), and per ended request
// in a full replay memory, with runtime.MemStats after a collection: the figures the defaults of
// Config's bounds are sized from. b.N is not used; run it with -benchtime 1x.
func BenchmarkMemory(b *testing.B) {
	const n = 1 << 17
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	measure := func(fill func(c *Core, r *Request)) float64 {
		cfg := Config{MaxLocks: -1, MaxRequests: -1, MaxHolders: -1, MaxWaiters: -1, ReplayCapacity: n}
		before := heap()
		c := mustCore(b, cfg)
		r := &Request{From: netip.MustParseAddrPort("10.0.0.1:5000")}
		r.Op = wire.OpAcquire
		fill(c, r)
		after := heap()
		runtime.KeepAlive(c)
		return float64(after-before) / n
	}
	locks := measure(func(c *Core, r *Request) {
		r.Mode = wire.Exclusive
		for i := 0; i < n; i++ {
			r.Lock, r.Txn = uint32(i), uint64(i+1)
			c.Step(0, r, nil)
		}
	})
	waiters := measure(func(c *Core, r *Request) {
		r.Mode, r.Lock = wire.Exclusive, 1
		for i := 0; i < n+1; i++ {
			r.Txn = uint64(i + 1)
			c.Step(0, r, nil)
		}
	})
	holders := measure(func(c *Core, r *Request) {
		r.Mode, r.Lock = wire.Shared, 1
		for i := 0; i < n+1; i++ {
			r.Txn = uint64(i + 1)
			c.Step(0, r, nil)
		}
	})
	ended := measure(func(c *Core, r *Request) {
		Pairs(c, n, 1024, nil)
	})
	b.ReportMetric(locks, "B/lock")
	b.ReportMetric(ended, "B/ended")
	b.ReportMetric(waiters, "B/waiter")
	b.ReportMetric(holders, "B/holder")
}
