package lockserver

import (
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// recvDatagram waits up to d for one datagram of up to 2 KiB.
func (p *peer) recvDatagram(d time.Duration) []byte {
	p.t.Helper()
	buf := make([]byte, 2048)
	_ = p.conn.SetReadDeadline(time.Now().Add(d))
	n, _, err := p.conn.ReadFromUDPAddrPort(buf)
	if err != nil {
		p.t.Fatalf("no datagram: %v", err)
	}
	return buf[:n]
}

// TestBatchOverUDP: a server that accepts batches answers a batch of requests with one batch
// datagram (answers in request order, every header flagged); a lone answer goes single. A
// control message riding in a batch from the switch peer, with the rack key after it, is
// refused (control-in-batch), and the requests around it are served; the same message alone
// with its key is accepted (the negative control).
func TestBatchOverUDP(t *testing.T) {
	s, stop, tp := startWithPeers(t, Config{Shards: 2, RackKey: testKey, AcceptBatch: true})
	defer stop()
	c := newPeer(t, s.Addr())
	acq := func(lock uint32, txn uint64) wire.Fields {
		return wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: lock, Txn: txn}
	}
	c.sendRaw(wire.AppendBatch(nil, acq(1, 1), acq(2, 2), acq(3, 3)))
	b := c.recvDatagram(5 * time.Second)
	k, err := wire.ParseBatch(b)
	if err != nil || k != 3 {
		t.Fatalf("answer to a batch of 3: %d headers, %v (% x)", k, err, b)
	}
	var tokens [3]uint64
	for i := 0; i < k; i++ {
		h := wire.BatchHeader(b, i)
		if h.Op() != wire.OpGrant || h.Lock() != uint32(i+1) {
			t.Fatalf("answer %d: %v lock %d", i, h.Op(), h.Lock())
		}
		tokens[i] = h.Token()
	}
	c.sendRaw(wire.AppendBatch(nil, wire.Fields{Op: wire.OpRelease, Lock: 2, Txn: 2, Token: tokens[1]}))
	if b := c.recvDatagram(5 * time.Second); len(b) != wire.Len || wire.IsBatch(b) {
		t.Fatalf("a lone answer: %d bytes, batch %v", len(b), wire.IsBatch(b))
	}

	qe := wire.Fields{Op: wire.OpQueueEmpty, Lock: wire.ReservedLockBase + 1, Slots: 1}
	batch := append(wire.AppendBatch(nil, acq(4, 4), qe), make([]byte, wire.AuthLen)...)
	tp.sw.sendRaw(batch) // a partial header trails: dropped whole
	eventuallyT(t, "the batch with a rack key trailer dropped", func() bool { return s.Malformed()["batch"] == 1 })
	tp.sw.sendRaw(wire.AppendBatch(nil, acq(4, 4), qe, acq(5, 5)))
	b = tp.sw.recvDatagram(5 * time.Second)
	if k, err := wire.ParseBatch(b); err != nil || k != 2 || wire.BatchHeader(b, 0).Lock() != 4 ||
		wire.BatchHeader(b, 1).Lock() != 5 {
		t.Fatalf("answers around the refused control message: %d, %v", k, err)
	}
	if r := s.ControlRefused(); r["control-in-batch"] != 1 {
		t.Fatalf("refused %v, want one control-in-batch", r)
	}
	tp.sw.sendControl(qe)
	if f, _ := tp.sw.recvBody(5 * time.Second); f.Op != wire.OpPushBack {
		t.Fatalf("the queue-empty alone: %s", f.String())
	}
}

// TestBatchOffByDefault: without AcceptBatch a batch is dropped whole, unanswered, and
// counted; a single datagram is served.
func TestBatchOffByDefault(t *testing.T) {
	s, stop := startServer(t, Config{Shards: 1})
	defer stop()
	c := newPeer(t, s.Addr())
	c.sendRaw(wire.AppendBatch(nil, wire.Fields{Op: wire.OpAcquire, Lock: 1, Txn: 1}))
	c.expectNothing(30 * time.Millisecond)
	if m := s.Malformed(); m["batch-off"] != 1 {
		t.Fatalf("malformed %v", m)
	}
	c.send(wire.Fields{Op: wire.OpAcquire, Lock: 1, Txn: 1})
	c.expect(wire.OpGrant, 1)
}
