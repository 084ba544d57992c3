// Package rdmaclient is the RDMA path of netlock's client library: a remote client takes the
// lock server's RDMA-backed locks (lock ids below the server's --rdma-locks) as a member of
// ALock's remote cohort, with one-sided verbs over the emulated RDMA fabric (rdma/emu's TCP
// transport), without sending a single UDP lock request. It excludes the server's co-located
// goroutines and the server's UDP clients of the same lock (both in ALock's local cohort).
//
// Against a server run with --rdma-mode rw the table holds RMA-RW locks (rdma/rma): the client
// is one element of each lock's tree (a node-level queue per lock in its own memory) and takes
// locks as a writer (Lock) or a reader (RLock: one fetch-and-add on the lock's reader counter in
// the server's memory while no writer is in); readers of every path share the lock. The join
// answer says which table the server has, with its parameters; Shared reports it. With an
// ALock table RLock takes the lock exclusively.
//
// A Client is one emulated RDMA node. Dial joins the server's fabric with an admin exchange over
// UDP (docs/protocol.md, "RDMA admin"): the server assigns the node id and answers with the
// table's base pointer and size and its NIC's address. The client's own NIC serves the verbs of
// its peers: ALock's remote descriptors live on their owner's node, and a remote waiter is
// handed the lock by its predecessor writing into its descriptor, so remote clients write to
// each other. A peer's NIC address is looked up on the server (admin again) the first time a
// verb targets it, before the verb is posted.
//
// Limitations: neither ALock nor RMA-RW has leases. A remote client that dies (or is closed) while it holds a
// lock, or while it waits in the lock's queue, blocks that lock for every cohort until the
// server restarts; the same holds for a transport error in the middle of an acquisition or
// release. There are no fencing tokens on this path. The NIC address exchange is IPv4 only.
package rdmaclient

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netlock-go/netlock/internal/gogroup"
	"github.com/netlock-go/netlock/internal/rdmaproto"
	"github.com/netlock-go/netlock/rdma/alock"
	"github.com/netlock-go/netlock/rdma/emu"
	"github.com/netlock-go/netlock/rdma/rma"
	"github.com/netlock-go/netlock/rdma/tablehandle"
	"github.com/netlock-go/netlock/rdma/verbs"
	"github.com/netlock-go/netlock/wire"
)

// Config configures a Client.
type Config struct {
	// Server is the lock server's UDP address ("host:port").
	Server string
	// RackKey is the rack key (docs/protocol.md, "Who may send what"): the join and peer-lookup
	// admin requests carry it, and answers must carry it too. Required; the server must also
	// list this client's address among its peers (lockserver.Peers.RDMANodes).
	RackKey uint64
	// Listen is the TCP address (IPv4) of this client's emulated NIC, which its peers must be
	// able to reach. Default "127.0.0.1:0".
	Listen string
	// Timeout bounds each admin exchange with the server (join, peer lookup). Default 5s.
	Timeout time.Duration
	// Retry is the retransmission interval of admin requests. Default 50ms.
	Retry time.Duration
	// Emu configures the client's emulated node (its region holds its descriptors; default
	// 1 MiB, room for 8191 locks held or waited for at once).
	Emu emu.Config
	// ALock configures the algorithm; the remote budget is the one this cohort uses.
	ALock alock.Config
}

// Errors.
var (
	// ErrClosed is returned once the client is closed, and by an acquisition the close abandoned.
	ErrClosed = errors.New("rdmaclient: closed")
	// ErrNotRDMALock is returned for a lock id outside the server's ALock table.
	ErrNotRDMALock = errors.New("rdmaclient: lock is not RDMA-backed")
	// ErrNotHeld is returned by Unlock for a lock this client does not hold.
	ErrNotHeld = errors.New("rdmaclient: lock not held")
	// ErrTimeout is returned when the server does not answer an admin request in time.
	ErrTimeout = errors.New("rdmaclient: admin request timed out")
	// ErrRejected is returned when the server refuses an admin request (a server without an
	// RDMA table refuses the join).
	ErrRejected = errors.New("rdmaclient: admin request rejected")
	// ErrNoRackKey is returned by Dial without Config.RackKey: servers drop admin requests that
	// do not carry the rack key, unanswered.
	ErrNoRackKey = errors.New("rdmaclient: no rack key configured")
)

// Client is a remote-cohort member of a lock server's ALock table. Safe for concurrent use; a
// lock may be unlocked by another goroutine than the one that locked it.
type Client struct {
	cfg    Config
	server *net.UDPAddr
	node   *emu.Node
	n      int
	tbl    *alock.Table // ALock table
	pool   *alock.Pool
	rw     *rma.TablePool // RMA-RW table (nil for an ALock table)
	held   []tablehandle.Held
	stop   atomic.Bool

	peerMu sync.Mutex
	known  sync.Map // verbs.NodeID -> struct{}: reachable from node

	goroutines gogroup.Group
}

// Dial joins the server's RDMA fabric.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Retry == 0 {
		cfg.Retry = 50 * time.Millisecond
	}
	if cfg.RackKey == 0 {
		return nil, ErrNoRackKey
	}
	srv, err := net.ResolveUDPAddr("udp", cfg.Server)
	if err != nil {
		return nil, fmt.Errorf("rdmaclient: server %q: %w", cfg.Server, err)
	}
	alg, err := alock.New(cfg.ALock)
	if err != nil {
		return nil, fmt.Errorf("rdmaclient: %w", err)
	}
	ln, err := net.Listen("tcp4", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("rdmaclient: listen: %w", err)
	}
	c := &Client{cfg: cfg, server: srv}
	nic := ln.Addr().(*net.TCPAddr).AddrPort()
	rep, err := c.exchange(ctx, wire.Fields{Op: wire.OpAdmin, Status: rdmaproto.AdminJoin,
		Client: netip.AddrPortFrom(nic.Addr().Unmap(), nic.Port())})
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("rdmaclient: join %s: %w", cfg.Server, err)
	}
	j := rdmaproto.DecodeJoin(&rep)
	if j.Node == rdmaproto.ServerNode || j.Locks <= 0 || j.Base.Node() != rdmaproto.ServerNode {
		ln.Close()
		return nil, fmt.Errorf("rdmaclient: join %s: bad answer %s", cfg.Server, rep.String())
	}
	c.node, err = emu.NewNode(cfg.Emu, j.Node)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("rdmaclient: %w", err)
	}
	c.node.Serve(ln)
	if err := c.connect(j.Base.Node(), c.resolveIP(j.NIC)); err != nil {
		c.node.Close()
		return nil, fmt.Errorf("rdmaclient: %w", err)
	}
	c.n = j.Locks
	c.held = make([]tablehandle.Held, j.Locks)
	newEP := func() verbs.Endpoint { return rdmaproto.Wrap(c.node.NewEndpoint(), &c.stop, c.resolve) }
	if j.RW {
		tbl, err := rma.OpenTable(j.Base, j.Locks, j.Params)
		if err != nil {
			c.node.Close()
			return nil, fmt.Errorf("rdmaclient: join %s: %w", cfg.Server, err)
		}
		c.rw = tbl.NodeView(c.node.ID(), c.node.Alloc).NewPool(newEP)
		return c, nil
	}
	c.tbl = alock.OpenTable(j.Base, j.Locks)
	c.pool = alg.NewPool(newEP)
	return c, nil
}

// resolveIP replaces an unspecified IP (a server NIC listening on all addresses) by the IP the
// server's UDP port was reached at.
func (c *Client) resolveIP(a netip.AddrPort) netip.AddrPort {
	if a.Addr().IsUnspecified() {
		ip, _ := netip.AddrFromSlice(c.server.IP)
		return netip.AddrPortFrom(ip.Unmap(), a.Port())
	}
	return a
}

// NodeID is the emulated node id the server assigned to this client.
func (c *Client) NodeID() verbs.NodeID { return c.node.ID() }

// Len is the number of RDMA-backed locks (ids 0..Len()-1).
func (c *Client) Len() int { return c.n }

// Shared reports whether the server's table has a shared mode (an RMA-RW table: RLock holders
// share the lock); with an ALock table RLock takes the lock exclusively.
func (c *Client) Shared() bool { return c.rw != nil }

// Lock takes lock i exclusively, blocking until it is held: in ALock's remote cohort (a queued
// waiter spins on its own node's memory; a cohort leader polls the lock with RDMA reads), or as
// an RMA-RW writer (queued first among this node's writers, with CPU atomics, then at the
// machine level in the server's memory).
//
// If ctx can be cancelled the acquisition runs on a helper goroutine and Lock returns ctx.Err()
// when ctx ends first; acquisitions cannot be withdrawn, so the helper finishes the acquisition
// and unlocks at once.
func (c *Client) Lock(ctx context.Context, i uint32) error { return c.acquire(ctx, i, false) }

// RLock takes lock i shared (an RMA-RW reader: one fetch-and-add on the lock's reader counter in
// the server's memory when no writer is in); with an ALock table it takes it exclusively.
// Release it with RUnlock. Otherwise as Lock.
func (c *Client) RLock(ctx context.Context, i uint32) error { return c.acquire(ctx, i, true) }

func (c *Client) acquire(ctx context.Context, i uint32, shared bool) error {
	if int(i) >= c.n {
		return fmt.Errorf("lock %d of %d: %w", i, c.n, ErrNotRDMALock)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.stop.Load() {
		return ErrClosed
	}
	h, err := c.handles().Get()
	if err != nil {
		return err
	}
	lock := func() error {
		err := rdmaproto.Do(func() error { return h.Lock(i, shared) })
		if err == nil {
			return nil
		}
		if c.stop.Load() {
			return ErrClosed
		}
		return fmt.Errorf("rdmaclient: lock %d (the lock may be left blocked): %w", i, err)
	}
	if ctx.Done() == nil {
		if err := lock(); err != nil {
			return err
		}
		c.held[i].Add(h, shared)
		return nil
	}
	var decided atomic.Bool
	res := make(chan error, 1)
	if !c.goroutines.Go(func() {
		err := lock()
		if err == nil && !decided.CompareAndSwap(false, true) {
			if rdmaproto.Do(func() error { return h.Unlock(i) }) == nil {
				_ = c.handles().Put(h)
			}
			return
		}
		res <- err
	}) {
		return ErrClosed
	}
	select {
	case err := <-res:
		if err != nil {
			return err
		}
	case <-ctx.Done():
		if decided.CompareAndSwap(false, true) {
			return ctx.Err()
		}
		if err := <-res; err != nil {
			return err
		}
	}
	c.held[i].Add(h, shared)
	return nil
}

// Unlock releases lock i taken with Lock.
func (c *Client) Unlock(i uint32) error { return c.release(i, false) }

// RUnlock releases one shared hold of lock i taken with RLock.
func (c *Client) RUnlock(i uint32) error { return c.release(i, true) }

func (c *Client) release(i uint32, shared bool) error {
	if int(i) >= c.n {
		return fmt.Errorf("lock %d of %d: %w", i, c.n, ErrNotRDMALock)
	}
	h := c.held[i].Take(shared)
	if h == nil {
		return ErrNotHeld
	}
	if c.stop.Load() {
		return ErrClosed
	}
	if err := rdmaproto.Do(func() error { return h.Unlock(i) }); err != nil {
		if c.stop.Load() {
			return ErrClosed
		}
		return fmt.Errorf("rdmaclient: unlock %d (the lock may be left blocked): %w", i, err)
	}
	return c.handles().Put(h)
}

// Close abandons every acquisition in progress, stops the client's NIC and waits for the
// client's goroutines. Locks still held stay held (see the package documentation).
func (c *Client) Close() error {
	if !c.goroutines.Close() {
		return nil
	}
	c.stop.Store(true)
	err := c.node.Close()
	c.goroutines.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// resolve makes node id reachable before a verb to it is posted: the server's node is connected
// at Dial, peers are looked up on the server on first use.
func (c *Client) resolve(id verbs.NodeID) error {
	if id == c.node.ID() {
		return nil
	}
	if _, ok := c.known.Load(id); ok {
		return nil
	}
	c.peerMu.Lock()
	defer c.peerMu.Unlock()
	if _, ok := c.known.Load(id); ok {
		return nil
	}
	rep, err := c.exchange(context.Background(), wire.Fields{Op: wire.OpAdmin, Status: rdmaproto.AdminPeer, Tenant: uint16(id)})
	if err != nil {
		return fmt.Errorf("rdmaclient: look up node %d: %w", id, err)
	}
	return c.connectLocked(id, c.resolveIP(rep.Client))
}

func (c *Client) connect(id verbs.NodeID, addr netip.AddrPort) error {
	c.peerMu.Lock()
	defer c.peerMu.Unlock()
	return c.connectLocked(id, addr)
}

func (c *Client) connectLocked(id verbs.NodeID, addr netip.AddrPort) error {
	if err := c.node.Connect(id, addr.String()); err != nil {
		return err
	}
	c.known.Store(id, struct{}{})
	return nil
}

// exchange sends an admin request with a fresh nonce until the server answers it or the timeout
// passes. Each exchange uses its own socket (they are rare: a join, one lookup per peer),
// connected to the server, so the kernel delivers only datagrams from the server's address. The
// request carries the rack key, and an admin answer without it is ignored (a reject, a client op,
// carries none; it must echo the random nonce).
func (c *Client) exchange(ctx context.Context, req wire.Fields) (wire.Fields, error) {
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	req.Txn = binary.BigEndian.Uint64(nonce[:]) | 1
	conn, err := net.DialUDP("udp", nil, c.server)
	if err != nil {
		return wire.Fields{}, err
	}
	defer conn.Close()
	pkt := wire.Append(nil, &req)
	pkt = append(pkt, make([]byte, wire.AuthLen)...)
	wire.SetRackKey(pkt, c.cfg.RackKey)
	buf := make([]byte, 256)
	deadline := time.Now().Add(c.cfg.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	for time.Now().Before(deadline) {
		if c.stop.Load() {
			return wire.Fields{}, ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return wire.Fields{}, err
		}
		if _, err := conn.Write(pkt); err != nil {
			return wire.Fields{}, err
		}
		_ = conn.SetReadDeadline(time.Now().Add(c.cfg.Retry))
		for {
			n, err := conn.Read(buf)
			if err != nil {
				break // timeout: retransmit
			}
			h, err := wire.Parse(buf[:n])
			if err != nil || h.Txn() != req.Txn {
				continue
			}
			var f wire.Fields
			h.Decode(&f)
			switch {
			case f.Op == wire.OpAdmin && f.Flags&wire.FlagReply != 0 && f.Status == req.Status:
				if key, ok := wire.RackKey(buf[:n]); !ok || key != c.cfg.RackKey {
					continue // not from a holder of the rack key
				}
				return f, nil
			case f.Op == wire.OpReject:
				return wire.Fields{}, fmt.Errorf("%w: status %d", ErrRejected, f.Status)
			}
		}
	}
	return wire.Fields{}, ErrTimeout
}
