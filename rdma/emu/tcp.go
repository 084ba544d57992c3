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

// Wire format of the TCP transport (all big endian). A request is 32 bytes:
//
//	0  u8  opcode
//	1  u8  reserved
//	2  u16 initiator node id
//	4  u32 reserved
//	8  u64 target pointer
//	16 u64 compare
//	24 u64 value
//
// and a response is 16 bytes: u64 value, u8 status (0 ok, 1 bad pointer), 7 reserved bytes.
// Requests on one connection are answered in order; a client uses one connection per
// concurrent request, like one queue pair per thread.
const (
	reqLen  = 32
	respLen = 16
)

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
	var req [reqLen]byte
	var resp [respLen]byte
	for {
		if _, err := io.ReadFull(r, req[:]); err != nil {
			return
		}
		wr := verbs.WorkRequest{
			Op:      verbs.Opcode(req[0]),
			Remote:  verbs.Ptr(binary.BigEndian.Uint64(req[8:])),
			Compare: binary.BigEndian.Uint64(req[16:]),
			Value:   binary.BigEndian.Uint64(req[24:]),
		}
		from := verbs.NodeID(binary.BigEndian.Uint16(req[2:]))
		resp = [respLen]byte{}
		if wr.Remote.Node() != n.id {
			resp[8] = 1
		} else if v, err := n.execute(wr, from); err != nil {
			resp[8] = 1
		} else {
			binary.BigEndian.PutUint64(resp[:], v)
		}
		if _, err := c.Write(resp[:]); err != nil {
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

func (t *tcpClient) execute(wr verbs.WorkRequest, from verbs.NodeID) (uint64, error) {
	c, err := t.get()
	if err != nil {
		return 0, err
	}
	var req [reqLen]byte
	req[0] = byte(wr.Op)
	binary.BigEndian.PutUint16(req[2:], uint16(from))
	binary.BigEndian.PutUint64(req[8:], uint64(wr.Remote))
	binary.BigEndian.PutUint64(req[16:], wr.Compare)
	binary.BigEndian.PutUint64(req[24:], wr.Value)
	if _, err := c.Write(req[:]); err != nil {
		c.Close()
		return 0, fmt.Errorf("send %v to %s: %w", wr.Op, t.addr, err)
	}
	var resp [respLen]byte
	if _, err := io.ReadFull(c, resp[:]); err != nil {
		c.Close()
		return 0, fmt.Errorf("receive %v from %s: %w", wr.Op, t.addr, err)
	}
	t.put(c)
	if resp[8] != 0 {
		return 0, fmt.Errorf("%v at %v via %s: %w", wr.Op, wr.Remote, t.addr, verbs.ErrBadPtr)
	}
	return binary.BigEndian.Uint64(resp[:]), nil
}
