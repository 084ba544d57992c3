package rdmaproto

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/netlock-go/netlock/rdma/alock"
	"github.com/netlock-go/netlock/rdma/emu"
	"github.com/netlock-go/netlock/rdma/rma"
	"github.com/netlock-go/netlock/rdma/verbs"
	"github.com/netlock-go/netlock/wire"
)

// TestAbortUnwindsSpin: a local-cohort acquisition spinning behind a holder returns ErrAborted
// once stop is set, and posts fail from then on.
func TestAbortUnwindsSpin(t *testing.T) {
	node, err := emu.NewNode(emu.Config{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	tbl, err := alock.NewTable(node.NewEndpoint(), 1)
	if err != nil {
		t.Fatal(err)
	}
	alg, _ := alock.New(alock.Config{})
	var stop atomic.Bool
	wrap := func() verbs.Endpoint { return Wrap(node.NewEndpoint(), &stop, nil) }
	holder, _ := alg.NewHandle(wrap())
	waiter, _ := alg.NewHandle(wrap())
	if err := Do(func() error { return holder.Lock(tbl.Lock(0)) }); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Do(func() error { return waiter.Lock(tbl.Lock(0)) }) }()
	stop.Store(true)
	if err := <-done; !errors.Is(err, ErrAborted) {
		t.Fatalf("spinning Lock after stop: %v, want ErrAborted", err)
	}
	ep := wrap()
	if _, err := verbs.Read(ep, tbl.Lock(0)); !errors.Is(err, ErrAborted) {
		t.Fatalf("read after stop: %v, want ErrAborted", err)
	}
}

func TestDoRepanics(t *testing.T) {
	defer func() {
		if r := recover(); r != "boom" {
			t.Fatalf("recovered %v, want the original panic", r)
		}
	}()
	_ = Do(func() error { panic("boom") })
}

// The RMA-RW parameters survive the join answer's timestamp field, and an ALock table's answer
// (timestamp 0) decodes as ALock.
func TestParamsRoundTrip(t *testing.T) {
	for _, p := range []rma.TableParams{{Counters: 1, TL: [2]int{1, 1}, TR: 1}, {Counters: 64, TL: [2]int{65535, 50}, TR: 65535}, {Counters: 3, TL: [2]int{20, 50}, TR: 1000}} {
		f := wire.Fields{Timestamp: PackParams(p)}
		j := DecodeJoin(&f)
		if !j.RW || j.Params != p {
			t.Errorf("%+v -> %+v (rw %v)", p, j.Params, j.RW)
		}
	}
	if j := DecodeJoin(&wire.Fields{}); j.RW {
		t.Error("timestamp 0 decoded as an RMA-RW table")
	}
}

// An acquisition of an RMA-RW table spinning behind a writer is abandoned the same way.
func TestAbortUnwindsRWSpin(t *testing.T) {
	node, err := emu.NewNode(emu.Config{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	tbl, err := rma.NewTable(node.NewEndpoint(), 1, rma.TableParams{})
	if err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	view := tbl.NodeView(node.ID(), node.Alloc)
	pool := view.NewPool(func() verbs.Endpoint { return Wrap(node.NewEndpoint(), &stop, nil) })
	holder, _ := pool.Get()
	reader, _ := pool.Get()
	if err := Do(func() error { return holder.Lock(0) }); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Do(func() error { return reader.RLock(0) }) }()
	stop.Store(true)
	if err := <-done; !errors.Is(err, ErrAborted) {
		t.Fatalf("reader behind a writer: %v, want ErrAborted", err)
	}
}
