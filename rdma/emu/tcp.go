package emu

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// Wire format of the TCP transport (all big endian). A request is a 16-byte header
//
//	0  u8  opcode (verbs.Opcode)
//	1  u8  reserved, 0
//	2  u16 initiator node id
//	4  u32 word count: the words a READ reads or a WRITE writes (1..verbs.MaxWords); 1 for atomics
//	8  u64 target pointer
//
// followed by the request's operand words (u64 each): READ none; WRITE the count words; CAS
// compare, value; FAA value; MASKED_CAS compare, compare mask, swap, swap mask; MASKED_FAA
// value, boundary. A response is an 8-byte header
//
//	0  u8  status: 0 ok, 1 bad pointer, 2 malformed request
//	1  3 reserved bytes
//	4  u32 number of result words
//
// followed by the result words: the words read (READ), the previous value (atomics), none
// (WRITE). Requests on one connection are answered in order; a client uses one connection per
// concurrent request, like one queue pair per thread. A malformed request header is answered
// with status 2 and the connection is closed (its framing is lost).
const (
	reqHeaderLen  = 16
	respHeaderLen = 8
)

const (
	statusOK        = 0
	statusBadPtr    = 1
	statusMalformed = 2
)

var errMalformed = errors.New("emu: malformed transport frame")

// reqHeader is a request header on the wire (reqHeaderLen bytes).
type reqHeader []byte

func (h reqHeader) Op() verbs.Opcode   { return verbs.Opcode(h[0]) }
func (h reqHeader) From() verbs.NodeID { return verbs.NodeID(binary.BigEndian.Uint16(h[2:])) }
func (h reqHeader) Count() uint32      { return binary.BigEndian.Uint32(h[4:]) }
func (h reqHeader) Target() verbs.Ptr  { return verbs.Ptr(binary.BigEndian.Uint64(h[8:])) }
func (h reqHeader) setCount(n uint32)  { binary.BigEndian.PutUint32(h[4:], n) }
func (h reqHeader) set(op verbs.Opcode, from verbs.NodeID, p verbs.Ptr) {
	h[0], h[1] = byte(op), 0
	binary.BigEndian.PutUint16(h[2:], uint16(from))
	binary.BigEndian.PutUint64(h[8:], uint64(p))
}

// operands is the number of operand words that follow a valid header.
func (h reqHeader) operands() int {
	switch h.Op() {
	case verbs.OpWrite:
		return int(h.Count())
	case verbs.OpCAS, verbs.OpMaskedFAA:
		return 2
	case verbs.OpFAA:
		return 1
	case verbs.OpMaskedCAS:
		return 4
	}
	return 0
}

// validate checks the header of a request.
func (h reqHeader) validate() error {
	if len(h) < reqHeaderLen {
		return fmt.Errorf("request header of %d bytes: %w", len(h), errMalformed)
	}
	op, n := h.Op(), h.Count()
	switch {
	case op < verbs.OpRead || op > verbs.OpMaskedFAA:
		return fmt.Errorf("opcode %d: %w", h[0], errMalformed)
	case h[1] != 0:
		return fmt.Errorf("reserved byte %#x: %w", h[1], errMalformed)
	case (op == verbs.OpRead || op == verbs.OpWrite) && (n < 1 || n > verbs.MaxWords):
		return fmt.Errorf("%v of %d words: %w", op, n, errMalformed)
	case op.IsAtomic() && n != 1:
		return fmt.Errorf("%v of %d words: %w", op, n, errMalformed)
	}
	return nil
}

// appendRequest appends wr's frame to buf.
func appendRequest(buf []byte, wr *verbs.WorkRequest, from verbs.NodeID) []byte {
	var hb [reqHeaderLen]byte
	h := reqHeader(hb[:])
	h.set(wr.Op, from, wr.Remote)
	h.setCount(uint32(wr.Len()))
	buf = append(buf, hb[:]...)
	put := func(v uint64) { buf = binary.BigEndian.AppendUint64(buf, v) }
	switch wr.Op {
	case verbs.OpWrite:
		if len(wr.Data) > 0 {
			for _, v := range wr.Data {
				put(v)
			}
		} else {
			put(wr.Value)
		}
	case verbs.OpCAS:
		put(wr.Compare)
		put(wr.Value)
	case verbs.OpFAA:
		put(wr.Value)
	case verbs.OpMaskedCAS:
		put(wr.Compare)
		put(wr.CompareMask)
		put(wr.Value)
		put(wr.SwapMask)
	case verbs.OpMaskedFAA:
		put(wr.Value)
		put(wr.Boundary)
	}
	return buf
}

// decodeRequest rebuilds a work request from a validated header and its operand bytes
// (8*h.operands() of them).
func decodeRequest(h reqHeader, ops []byte) verbs.WorkRequest {
	w := func(i int) uint64 { return binary.BigEndian.Uint64(ops[8*i:]) }
	wr := verbs.WorkRequest{Op: h.Op(), Remote: h.Target()}
	switch wr.Op {
	case verbs.OpRead:
		if n := int(h.Count()); n > 1 {
			wr.Words = n
		}
	case verbs.OpWrite:
		if n := int(h.Count()); n > 1 {
			wr.Data = make([]uint64, n)
			for i := range wr.Data {
				wr.Data[i] = w(i)
			}
		} else {
			wr.Value = w(0)
		}
	case verbs.OpCAS:
		wr.Compare, wr.Value = w(0), w(1)
	case verbs.OpFAA:
		wr.Value = w(0)
	case verbs.OpMaskedCAS:
		wr.Compare, wr.CompareMask, wr.Value, wr.SwapMask = w(0), w(1), w(2), w(3)
	case verbs.OpMaskedFAA:
		wr.Value, wr.Boundary = w(0), w(1)
	}
	return wr
}

// respHeader is a response header on the wire (respHeaderLen bytes).
type respHeader []byte

func (h respHeader) Status() byte  { return h[0] }
func (h respHeader) Count() uint32 { return binary.BigEndian.Uint32(h[4:]) }
func (h respHeader) set(st byte, n uint32) {
	h[0], h[1], h[2], h[3] = st, 0, 0, 0
	binary.BigEndian.PutUint32(h[4:], n)
}

// validate checks a response header against the request it answers.
func (h respHeader) validate(op verbs.Opcode, words int) error {
	if len(h) < respHeaderLen {
		return fmt.Errorf("response header of %d bytes: %w", len(h), errMalformed)
	}
	if h.Status() > statusMalformed {
		return fmt.Errorf("response status %d: %w", h.Status(), errMalformed)
	}
	want := uint32(1)
	switch {
	case h.Status() != statusOK, op == verbs.OpWrite:
		want = 0
	case op == verbs.OpRead:
		want = uint32(words)
	}
	if h.Count() != want {
		return fmt.Errorf("%v response with %d words, want %d: %w", op, h.Count(), want, errMalformed)
	}
	return nil
}

type serverState struct {
	mu    sync.Mutex
	lns   []net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func (s *serverState) close() error {
	s.mu.Lock()
	var errs []error
	for _, ln := range s.lns {
		if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return errors.Join(errs...)
}

// Serve makes this node's NIC answer verbs arriving on ln until the node is closed. It returns
// immediately; connections are served by goroutines that Close stops.
func (n *Node) Serve(ln net.Listener) {
	s := &n.srv
	s.mu.Lock()
	s.lns = append(s.lns, ln)
	if s.conns == nil {
		s.conns = map[net.Conn]struct{}{}
	}
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				if !n.closed.Load() {
					n.cfg.Log.Warn("rdma emu accept", "node", n.id, "err", err)
				}
				return
			}
			s.mu.Lock()
			if n.closed.Load() {
				s.mu.Unlock()
				c.Close()
				return
			}
			s.conns[c] = struct{}{}
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				n.serveConn(c)
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
		}
	}()
}

func (n *Node) serveConn(c net.Conn) {
	r := bufio.NewReader(c)
	hb := make([]byte, reqHeaderLen)
	ops := make([]byte, 0, 8*verbs.MaxWords)
	out := make([]byte, 0, respHeaderLen+8*verbs.MaxWords)
	for {
		if _, err := io.ReadFull(r, hb); err != nil {
			return
		}
		h := reqHeader(hb)
		out = out[:respHeaderLen]
		if err := h.validate(); err != nil {
			n.cfg.Log.Warn("rdma emu: dropping connection", "node", n.id, "err", err)
			respHeader(out).set(statusMalformed, 0)
			c.Write(out)
			return
		}
		ops = ops[:8*h.operands()]
		if _, err := io.ReadFull(r, ops); err != nil {
			return
		}
		wr := decodeRequest(h, ops)
		st := byte(statusOK)
		if wr.Remote.Node() != n.id {
			st = statusBadPtr
		} else if v, words, err := n.execute(wr, h.From()); errors.Is(err, verbs.ErrBadRequest) {
			st = statusMalformed
		} else if err != nil {
			st = statusBadPtr
		} else if wr.Op == verbs.OpRead && words != nil {
			for _, x := range words {
				out = binary.BigEndian.AppendUint64(out, x)
			}
		} else if wr.Op != verbs.OpWrite {
			out = binary.BigEndian.AppendUint64(out, v)
		}
		respHeader(out).set(st, uint32((len(out)-respHeaderLen)/8))
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

// Connect makes node id, served by another process at addr, reachable from this node's
// endpoints. Connections are opened lazily, one per concurrent request.
func (n *Node) Connect(id verbs.NodeID, addr string) error {
	if id == n.id {
		return fmt.Errorf("connect node %d to itself", id)
	}
	n.peersMu.Lock()
	defer n.peersMu.Unlock()
	if _, ok := n.peers[id]; ok {
		return fmt.Errorf("connect node %d: already reachable", id)
	}
	n.peers[id] = &tcpClient{addr: addr}
	return nil
}

type tcpClient struct {
	addr string
	mu   sync.Mutex
	idle []net.Conn
	all  []net.Conn
	shut bool
}

func (t *tcpClient) get() (net.Conn, error) {
	t.mu.Lock()
	if t.shut {
		t.mu.Unlock()
		return nil, verbs.ErrClosed
	}
	if k := len(t.idle); k > 0 {
		c := t.idle[k-1]
		t.idle = t.idle[:k-1]
		t.mu.Unlock()
		return c, nil
	}
	t.mu.Unlock()
	c, err := net.Dial("tcp", t.addr)
	if err != nil {
		return nil, fmt.Errorf("dial rdma peer %s: %w", t.addr, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.shut {
		c.Close()
		return nil, verbs.ErrClosed
	}
	t.all = append(t.all, c)
	return c, nil
}

func (t *tcpClient) put(c net.Conn) {
	t.mu.Lock()
	t.idle = append(t.idle, c)
	t.mu.Unlock()
}

func (t *tcpClient) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.shut = true
	for _, c := range t.all {
		c.Close()
	}
	t.all, t.idle = nil, nil
}

func (t *tcpClient) execute(wr verbs.WorkRequest, from verbs.NodeID) (uint64, []uint64, error) {
	frame := appendRequest(nil, &wr, from)
	if err := reqHeader(frame).validate(); err != nil || wr.Words < 0 || wr.Words > verbs.MaxWords || len(wr.Data) > verbs.MaxWords {
		return 0, nil, fmt.Errorf("%v of %d words to %s: %w", wr.Op, wr.Len(), t.addr, verbs.ErrBadRequest)
	}
	c, err := t.get()
	if err != nil {
		return 0, nil, err
	}
	if _, err := c.Write(frame); err != nil {
		c.Close()
		return 0, nil, fmt.Errorf("send %v to %s: %w", wr.Op, t.addr, err)
	}
	var hb [respHeaderLen]byte
	if _, err := io.ReadFull(c, hb[:]); err != nil {
		c.Close()
		return 0, nil, fmt.Errorf("receive %v from %s: %w", wr.Op, t.addr, err)
	}
	h := respHeader(hb[:])
	if err := h.validate(wr.Op, wr.Len()); err != nil {
		c.Close()
		return 0, nil, fmt.Errorf("%v from %s: %w", wr.Op, t.addr, err)
	}
	body := make([]byte, 8*h.Count())
	if _, err := io.ReadFull(c, body); err != nil {
		c.Close()
		return 0, nil, fmt.Errorf("receive %v from %s: %w", wr.Op, t.addr, err)
	}
	t.put(c)
	switch h.Status() {
	case statusBadPtr:
		return 0, nil, fmt.Errorf("%v at %v via %s: %w", wr.Op, wr.Remote, t.addr, verbs.ErrBadPtr)
	case statusMalformed:
		return 0, nil, fmt.Errorf("%v at %v via %s: %w", wr.Op, wr.Remote, t.addr, verbs.ErrBadRequest)
	}
	if len(body) == 0 {
		return 0, nil, nil
	}
	if wr.Op == verbs.OpRead && wr.Words > 1 {
		words := make([]uint64, len(body)/8)
		for i := range words {
			words[i] = binary.BigEndian.Uint64(body[8*i:])
		}
		return words[0], words, nil
	}
	return binary.BigEndian.Uint64(body), nil, nil
}
