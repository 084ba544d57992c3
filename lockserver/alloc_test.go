package lockserver

import (
	"net/netip"
	"testing"

	"github.com/netlock-go/netlock/lockserver/srvcore"
	"github.com/netlock-go/netlock/wire"
)

// TestPacketPathAllocs checks that handling a datagram (decoding it, stepping it through its
// shard in the core), encoding the answers and sending them with sendmmsg allocates nothing in
// steady state.
func TestPacketPathAllocs(t *testing.T) {
	s, w, from := allocRig(t, false)
	acq := wire.Append(nil, &wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 1, Txn: 1})
	rel := wire.Append(nil, &wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive, Lock: 1, Txn: 1})
	var out srvcore.Out
	now := s.now()
	step := func(pkt []byte, txn uint64, lock uint32, token uint64) uint64 {
		h := wire.Header(pkt)
		h.SetTxn(txn)
		h.SetLock(lock)
		h.SetToken(token)
		out.Reset()
		s.core.Handle(now, pkt, from, &out)
		if len(out.Sends) == 0 {
			t.Fatal("no answer")
		}
		tok := out.Sends[0].Msg.Token
		w.apply(now, &out)
		w.flushIfFull()
		return tok
	}
	txn := uint64(0)
	round := func() {
		for i := 0; i < 8; i++ {
			txn++
			lock := uint32(txn % 64)
			tok := step(acq, txn, lock, 0)
			step(rel, txn, lock, tok)
		}
		w.flush()
	}
	for i := 0; i < 100; i++ {
		round()
	}
	if n := testing.AllocsPerRun(200, round); n != 0 {
		t.Fatalf("%v allocations per 16 packets, want 0", n)
	}
}

// TestBatchPathAllocs: the same for batch datagrams: a batch of acquires, then a batch of their
// releases, each header stepped and the answers packed into batch datagrams, allocates nothing
// in steady state.
func TestBatchPathAllocs(t *testing.T) {
	s, w, from := allocRig(t, true)
	const k = 8
	acqs, rels := make([]wire.Fields, k), make([]wire.Fields, k)
	for i := range acqs {
		acqs[i] = wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive}
		rels[i] = wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive}
	}
	acq, rel := wire.AppendBatch(nil, acqs...), wire.AppendBatch(nil, rels...)
	var out srvcore.Out
	var tokens [k]uint64
	now := s.now()
	txn := uint64(0)
	round := func() {
		for i := 0; i < k; i++ {
			txn++
			h := wire.BatchHeader(acq, i)
			h.SetTxn(txn)
			h.SetLock(uint32(txn % 64))
			r := wire.BatchHeader(rel, i)
			r.SetTxn(txn)
			r.SetLock(uint32(txn % 64))
		}
		out.Reset()
		s.core.Handle(now, acq, from, &out)
		if len(out.Sends) != k {
			t.Fatalf("%d answers to a batch of %d acquires", len(out.Sends), k)
		}
		for i := range out.Sends {
			tokens[i] = out.Sends[i].Msg.Token
		}
		w.apply(now, &out)
		for i := 0; i < k; i++ {
			wire.BatchHeader(rel, i).SetToken(tokens[i])
		}
		out.Reset()
		s.core.Handle(now, rel, from, &out)
		w.apply(now, &out)
		w.flush()
	}
	for i := 0; i < 100; i++ {
		round()
	}
	if n := testing.AllocsPerRun(200, round); n != 0 {
		t.Fatalf("%v allocations per two batches of %d, want 0", n, k)
	}
}

// allocRig is a server on loopback (two shards, one socket; batches accepted if batch) whose
// sockets close when t ends, its first writer, and the address of a peer its answers go to and
// are never read.
func allocRig(t *testing.T, batch bool) (*Server, *writer, netip.AddrPort) {
	t.Helper()
	s, err := New(Config{Listen: "127.0.0.1:0", Shards: 2, Sockets: 1, AcceptBatch: batch})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.closeConns)
	w, err := s.newWriter(0)
	if err != nil {
		t.Fatal(err)
	}
	return s, w, newPeer(t, s.Addr()).addr()
}
