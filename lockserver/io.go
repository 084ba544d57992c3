package lockserver

import (
	"net"
	"net/netip"

	"github.com/netlock-go/netlock/internal/udpbatch"
	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/wire"
)

// maxDatagram is the largest datagram read; netlock packets are wire.Len bytes, the rest is
// tolerated (and ignored) so that a longer packet is not mistaken for a short one.
const maxDatagram = 2048

// reader reads datagrams from one socket: in batches (recvmmsg, no allocation) from a raw UDP
// socket, one at a time from a wrapped one.
type reader struct {
	batch  *udpbatch.Reader
	pc     net.PacketConn
	buf    []byte
	n      int
	single netip.AddrPort
}

func (s *Server) newReader(i int) (*reader, error) {
	r := &reader{pc: s.conns[i]}
	if s.raw[i] == nil {
		r.buf = make([]byte, maxDatagram)
		return r, nil
	}
	var err error
	r.batch, err = udpbatch.NewReader(s.raw[i], s.cfg.Batch, maxDatagram)
	return r, err
}

func (r *reader) read() (int, error) {
	if r.batch != nil {
		return r.batch.Read()
	}
	n, from, err := r.pc.ReadFrom(r.buf)
	if err != nil {
		return 0, err
	}
	r.n, r.single = n, addrPort(from)
	return 1, nil
}

func (r *reader) packet(k int) ([]byte, netip.AddrPort) {
	if r.batch != nil {
		return r.batch.Packet(k)
	}
	return r.buf[:r.n], r.single
}

func addrPort(a net.Addr) netip.AddrPort {
	if u, ok := a.(*net.UDPAddr); ok {
		ap := u.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}

// writer collects outgoing packets and sends them in batches (sendmmsg), or one at a time on a
// wrapped socket. A writer belongs to one goroutine.
type writer struct {
	s     *Server
	batch *udpbatch.Writer
	pc    net.PacketConn
	buf   []byte
	queue []lockcore.Effect // wrapped socket only
	// pending are the answers to batching clients not yet committed (addEffects); reused.
	pending []pendingBatch
}

func (s *Server) newWriter(i int) (*writer, error) {
	w := &writer{s: s, pc: s.conns[i]}
	if s.raw[i] == nil {
		w.buf = make([]byte, wire.ControlLen)
		return w, nil
	}
	size := wire.ControlLen
	if s.cfg.AcceptBatch {
		size = max(size, wire.MaxBatch*wire.Len)
	}
	var err error
	w.batch, err = udpbatch.NewWriter(s.raw[i], 4*s.cfg.Batch, size)
	return w, err
}

// encode writes m into b (at least wire.ControlLen bytes) and returns the datagram's length: a
// control message (push-back, admin reply) carries the rack key in its trailer.
func (w *writer) encode(b []byte, m *wire.Fields) int {
	wire.Header(b).Encode(m)
	if !m.Op.IsControl() {
		return wire.Len
	}
	wire.SetRackKey(b, uint64(w.s.cfg.RackKey))
	return wire.ControlLen
}

// addEffects queues the datagrams of es. Answers to the sender of a batch datagram (batchTo,
// on a raw socket), and every later answer to it until the next flush, wait in a pending batch
// of that destination: flush sends each pending batch as batch datagrams of up to
// wire.MaxBatch headers (a lone answer single), after everything committed before it, so that
// one destination's answers keep their order. A reader flushes after each recvmmsg: the answers
// to a batching client's datagrams of one read leave together. A wrapped socket sends every
// answer single.
func (w *writer) addEffects(es []lockcore.Effect, batchTo netip.AddrPort) {
	if w.batch == nil {
		w.queue = append(w.queue, es...)
		return
	}
	if batchTo.IsValid() && w.pendingOf(batchTo) < 0 {
		w.pending = append(w.pending, pendingBatch{to: batchTo})
	}
	for i := range es {
		e := &es[i]
		if p := w.pendingOf(e.To); p >= 0 && !e.Msg.Op.IsControl() {
			pb := &w.pending[p]
			if pb.n == wire.MaxBatch {
				w.commitPending(pb)
			}
			wire.Header(pb.buf[pb.n*wire.Len:]).Encode(&e.Msg)
			pb.n++
			continue
		}
		n := w.encode(w.batch.Next(), &e.Msg)
		w.batch.Commit(n, e.To)
	}
}

// pendingBatch holds the answers to one batching client until the writer's next flush.
type pendingBatch struct {
	to  netip.AddrPort
	n   int
	buf [wire.MaxBatch * wire.Len]byte
}

// pendingOf returns the index of to's pending batch, or -1.
func (w *writer) pendingOf(to netip.AddrPort) int {
	for i := range w.pending {
		if w.pending[i].to == to {
			return i
		}
	}
	return -1
}

// commitPending moves pb's answers into the writer: one batch datagram, each header flagged,
// or, for a lone answer, a single datagram.
func (w *writer) commitPending(pb *pendingBatch) {
	if pb.n == 0 {
		return
	}
	d := w.batch.Next()
	n := copy(d, pb.buf[:pb.n*wire.Len])
	if pb.n > 1 {
		for k := 0; k < n; k += wire.Len {
			h := wire.Header(d[k : k+wire.Len])
			h.SetFlags(h.Flags() | wire.FlagBatch)
		}
	}
	w.batch.Commit(n, pb.to)
	pb.n = 0
}

func (w *writer) flushIfFull() {
	if w.batch != nil && w.batch.Len() >= w.s.cfg.Batch {
		w.flush()
	}
}

func (w *writer) flush() {
	if w.batch == nil {
		for i := range w.queue {
			n := w.encode(w.buf, &w.queue[i].Msg)
			if _, err := w.pc.WriteTo(w.buf[:n], net.UDPAddrFromAddrPort(w.queue[i].To)); err != nil {
				w.s.sendErr.Add(1)
				continue
			}
			w.s.sent.Add(1)
		}
		w.queue = w.queue[:0]
		return
	}
	for i := range w.pending {
		w.commitPending(&w.pending[i])
	}
	w.pending = w.pending[:0]
	errsBefore := w.batch.Errors
	n, _ := w.batch.Flush()
	w.s.sent.Add(uint64(n))
	w.s.sendErr.Add(w.batch.Errors - errsBefore)
}

// sendBody sends an admin reply with a body after its rack key trailer, after everything the
// writer holds (replies with a body are rare: they skip the batch).
func (w *writer) sendBody(to netip.AddrPort, m *wire.Fields, body []byte) {
	w.flush()
	b := make([]byte, wire.ControlLen, wire.ControlLen+len(body))
	w.encode(b, m)
	b = append(b, body...)
	if _, err := w.pc.WriteTo(b, net.UDPAddrFromAddrPort(to)); err != nil {
		w.s.sendErr.Add(1)
		return
	}
	w.s.sent.Add(1)
}
