package alock_test

import (
	"errors"
	"math/rand"
	"sync"
	"testing"

	"github.com/netlock-go/netlock/rdma/alock"
	"github.com/netlock-go/netlock/rdma/emu"
	"github.com/netlock-go/netlock/rdma/rdmatest"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// The lock-server shape: a table of N ALocks on the server's node; goroutines on the server
// (local cohort, through a handle pool) and threads of another node (remote cohort) take
// locks, some holding two locks at once (two handles, locks taken in index order).
func TestTablePoolServerShape(t *testing.T) {
	s := rdmatest.Seed(t)
	c, err := emu.NewCluster(emu.Config{Seed: s, AtomicWindowYields: 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv := c.Node(0)
	tbl, err := alock.NewTable(srv.NewEndpoint(), 4)
	if err != nil {
		t.Fatal(err)
	}
	dets := make([]*rdmatest.Detector, tbl.Len())
	for i := range dets {
		if dets[i], err = rdmatest.NewDetector(srv.NewEndpoint()); err != nil {
			t.Fatal(err)
		}
	}
	alg := newALock(t, alock.Config{LocalBudget: 2, RemoteBudget: 3}, nil)
	pool := alg.NewPool(func() verbs.Endpoint { return srv.NewEndpoint() })
	remoteTbl := alock.OpenTable(tbl.Base(), tbl.Len())
	const ops = 60
	var wg sync.WaitGroup
	var mu sync.Mutex
	var entries int
	worker := func(id uint64, get func() (*alock.Handle, error), put func(*alock.Handle), tb *alock.Table, ep func() verbs.Endpoint) {
		defer wg.Done()
		rng := rand.New(rand.NewSource(s + int64(id)))
		e := ep()
		for k := 0; k < ops; k++ {
			i, j := rng.Intn(tb.Len()), rng.Intn(tb.Len())
			if i > j {
				i, j = j, i
			}
			h1, err := get()
			if err != nil {
				t.Error(err)
				return
			}
			if err := h1.Lock(tb.Lock(i)); err != nil {
				t.Error(err)
				return
			}
			var h2 *alock.Handle
			if j != i {
				if h2, err = get(); err != nil {
					t.Error(err)
					return
				}
				if err := h2.Lock(tb.Lock(j)); err != nil {
					t.Error(err)
					return
				}
				if err := dets[j].CS(e, id, nil); err != nil {
					t.Error(err)
					return
				}
			}
			if err := dets[i].CS(e, id, nil); err != nil {
				t.Error(err)
				return
			}
			if h2 != nil {
				if err := h2.Unlock(tb.Lock(j)); err != nil {
					t.Error(err)
					return
				}
				put(h2)
			}
			if err := h1.Unlock(tb.Lock(i)); err != nil {
				t.Error(err)
				return
			}
			put(h1)
			mu.Lock()
			entries++
			if h2 != nil {
				entries++
			}
			mu.Unlock()
		}
	}
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go worker(uint64(g+1), pool.Get, func(h *alock.Handle) {
			if err := pool.Put(h); err != nil {
				t.Error(err)
			}
		}, tbl, func() verbs.Endpoint { return srv.NewEndpoint() })
	}
	for g := 0; g < 3; g++ {
		// A remote thread keeps its own two handles.
		ep := c.Node(1).NewEndpoint()
		hs := []*alock.Handle{}
		for k := 0; k < 2; k++ {
			h, err := alg.NewHandle(c.Node(1).NewEndpoint())
			if err != nil {
				t.Fatal(err)
			}
			hs = append(hs, h)
		}
		var mu2 sync.Mutex
		wg.Add(1)
		go worker(uint64(10+g), func() (*alock.Handle, error) {
			mu2.Lock()
			defer mu2.Unlock()
			h := hs[len(hs)-1]
			hs = hs[:len(hs)-1]
			return h, nil
		}, func(h *alock.Handle) { mu2.Lock(); hs = append(hs, h); mu2.Unlock() }, remoteTbl, func() verbs.Endpoint { return ep })
	}
	wg.Wait()
	var total uint64
	for _, d := range dets {
		if d.Violations() != 0 {
			t.Fatalf("violation: %s", d.First())
		}
		n, err := d.Count(srv.NewEndpoint())
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	if total != uint64(entries) {
		t.Fatalf("counters %d, entries %d", total, entries)
	}
	if pool.Size() > 6 {
		t.Fatalf("pool allocated %d handles for 3 goroutines holding at most 2 each", pool.Size())
	}
	h, _ := pool.Get()
	if err := h.Lock(tbl.Lock(0)); err != nil {
		t.Fatal(err)
	}
	if err := pool.Put(h); !errors.Is(err, alock.ErrPutHeld) {
		t.Fatalf("put of a held handle: %v", err)
	}
	if err := h.Lock(tbl.Lock(1)); !errors.Is(err, alock.ErrBusy) {
		t.Fatalf("second lock on one handle: %v", err)
	}
	if err := h.Unlock(tbl.Lock(0)); err != nil {
		t.Fatal(err)
	}
	if err := h.Unlock(tbl.Lock(0)); !errors.Is(err, alock.ErrNotHeld) {
		t.Fatalf("double unlock: %v", err)
	}
}
