package lockserver

import (
	"net"
	"net/netip"

	"golang.org/x/net/ipv4"

	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/wire"
)

// maxDatagram is the largest datagram read; netlock packets are wire.Len bytes, the rest is
// tolerated (and ignored) so that a longer packet is not mistaken for a short one.
const maxDatagram = 2048

// reader reads datagrams from one socket: in batches (recvmmsg) from a raw UDP socket, one at a
// time from a wrapped one.
type reader struct {
	batch  *ipv4.PacketConn
	pc     net.PacketConn
	msgs   []ipv4.Message
	buf    []byte
	n      int
	single netip.AddrPort
}

func (s *Server) newReader(i int) *reader {
	r := &reader{pc: s.conns[i]}
	if s.raw[i] != nil {
		r.batch = ipv4.NewPacketConn(s.raw[i])
		r.msgs = make([]ipv4.Message, s.cfg.Batch)
		for k := range r.msgs {
			r.msgs[k].Buffers = [][]byte{make([]byte, maxDatagram)}
		}
	} else {
		r.buf = make([]byte, maxDatagram)
	}
	return r
}

func (r *reader) read() (int, error) {
	if r.batch != nil {
		return r.batch.ReadBatch(r.msgs, 0)
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
		m := &r.msgs[k]
		return m.Buffers[0][:m.N], addrPort(m.Addr)
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
	batch *ipv4.PacketConn
	pc    net.PacketConn
	msgs  []ipv4.Message
	n     int
}

func (s *Server) newWriter(i int) *writer {
	w := &writer{s: s, pc: s.conns[i], msgs: make([]ipv4.Message, 4*s.cfg.Batch)}
	if s.raw[i] != nil {
		w.batch = ipv4.NewPacketConn(s.raw[i])
	}
	for k := range w.msgs {
		w.msgs[k].Buffers = [][]byte{make([]byte, wire.Len)}
	}
	return w
}

func (w *writer) addEffects(es []lockcore.Effect) {
	for i := range es {
		if w.n == len(w.msgs) {
			w.flush()
		}
		m := &w.msgs[w.n]
		wire.Header(m.Buffers[0]).Encode(&es[i].Msg)
		m.Addr = net.UDPAddrFromAddrPort(es[i].To)
		w.n++
	}
}

func (w *writer) flushIfFull() {
	if w.n >= w.s.cfg.Batch {
		w.flush()
	}
}

func (w *writer) flush() {
	if w.n == 0 {
		return
	}
	if w.batch == nil {
		for k := 0; k < w.n; k++ {
			if _, err := w.pc.WriteTo(w.msgs[k].Buffers[0], w.msgs[k].Addr); err != nil {
				w.s.sendErr.Add(1)
				continue
			}
			w.s.sent.Add(1)
		}
		w.n = 0
		return
	}
	for sent := 0; sent < w.n; {
		k, err := w.batch.WriteBatch(w.msgs[sent:w.n], 0)
		if err != nil {
			// One bad destination must not block the rest: skip it.
			w.s.sendErr.Add(1)
			k = max(k, 1)
		} else {
			w.s.sent.Add(uint64(k))
		}
		sent += k
	}
	w.n = 0
}
