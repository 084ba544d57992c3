package rdmaproto

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/netlock-go/netlock/rdma/alock"
	"github.com/netlock-go/netlock/rdma/emu"
	"github.com/netlock-go/netlock/rdma/verbs"
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
