// Package hostshim puts UDP programs on the ports of netlock's software switch: it turns the
// datagrams of the client library and the lock server into Ethernet/IPv4/UDP frames on a switch
// port, and frames from the port back into datagrams.
//
// A [Host] is one machine of the virtual rack: an IPv4 address and a MAC, a NIC attached to one
// switch port (a [port.Port]: the host's end of an in-memory pair, or a UDP tunnel to a
// `netlock switch --udp-port`), and UDP sockets bound to its address. A socket is a [Conn], a
// net.PacketConn: a datagram written to it leaves as one frame from the host's address and
// MAC to the gateway's MAC (the switch routes it by IP); a frame that arrives for the host's
// address is delivered to the socket bound to its destination port. [Host.WrapConn] plugs a
// host socket into client.Config.WrapConn or lockserver.Config.WrapConn, so the real client
// library and lock server run unchanged on the virtual rack. [Plan] is the rack's address plan.
//
// Frames are built and parsed without allocation ([udpframe]); each datagram delivered to a
// socket is one copy into a buffer from a pool. A host drops and counts what is not for it
// (another address, a bad checksum, not UDP) and what a full socket queue cannot take
// ([Stats]), as a NIC and a kernel would.
package hostshim

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netlock-go/netlock/bmv2/port"
	"github.com/netlock-go/netlock/internal/udpframe"
)

// MAC is an Ethernet address.
type MAC = udpframe.MAC

// Errors.
var (
	// ErrClosed is returned by a closed host or socket.
	ErrClosed = net.ErrClosed
	// ErrPortInUse is returned by ListenUDP for a bound port (unless Reuse is set).
	ErrPortInUse = errors.New("hostshim: port in use")
	// ErrTooLarge is returned by WriteTo for a datagram that does not fit a frame.
	ErrTooLarge = errors.New("hostshim: datagram too large")
)

// MaxDatagram is the largest datagram a Conn sends (the largest frame a port carries, less the
// headers).
const MaxDatagram = port.MaxFrame - udpframe.HeaderLen

// Config configures a Host.
type Config struct {
	// Addr is the host's IPv4 address.
	Addr netip.Addr
	// MAC is the host's MAC. Default MACFor(Addr).
	MAC MAC
	// Gateway is the MAC every frame is sent to: the switch's (MACFor of the switch's address
	// in a Plan).
	Gateway MAC
	// Link is the host's end of its switch port. The host owns it and closes it on Close.
	Link port.Port
	// Queue is the number of datagrams a socket holds before it drops. Default 1024.
	Queue int
	// Logger receives debug logs of dropped frames. Default: discard.
	Logger *slog.Logger
}

func (c *Config) validate() error {
	if !c.Addr.Is4() {
		return fmt.Errorf("hostshim: address %v is not IPv4", c.Addr)
	}
	if c.Link == nil {
		return errors.New("hostshim: no link")
	}
	if c.MAC == (MAC{}) {
		c.MAC = MACFor(c.Addr)
	}
	if c.Queue == 0 {
		c.Queue = 1024
	}
	if c.Queue < 1 {
		return fmt.Errorf("hostshim: queue %d must be positive", c.Queue)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Stats counts a host's frames.
type Stats struct {
	// FramesOut and FramesIn count frames sent on and received from the link.
	FramesOut, FramesIn uint64
	// Delivered counts datagrams handed to sockets.
	Delivered uint64
	// Dropped frames, by reason: not IPv4/UDP or malformed (Malformed), for another address
	// or MAC (NotMine), for a port nobody listens on (NoSocket), a full socket queue (QueueFull).
	Malformed, NotMine, NoSocket, QueueFull uint64
}

// Host is one machine of the virtual rack. Its methods are safe for concurrent use.
type Host struct {
	cfg   Config
	mu    sync.Mutex
	socks map[uint16][]*Conn // by local port; several with Reuse
	next  uint16             // next ephemeral port
	done  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup
	bufs  sync.Pool

	framesOut, framesIn, delivered          atomic.Uint64
	malformed, notMine, noSocket, queueFull atomic.Uint64
	sendMu                                  sync.Mutex
	sendBuf                                 []byte
}

// New starts a host: its reader takes frames from the link until Close.
func New(cfg Config) (*Host, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	h := &Host{cfg: cfg, socks: map[uint16][]*Conn{}, next: 32768, done: make(chan struct{}),
		sendBuf: make([]byte, 0, port.MaxFrame)}
	h.bufs.New = func() any { b := make([]byte, MaxDatagram); return &b }
	h.wg.Add(1)
	go h.read()
	return h, nil
}

// Addr is the host's address.
func (h *Host) Addr() netip.Addr { return h.cfg.Addr }

// MAC is the host's MAC.
func (h *Host) MAC() MAC { return h.cfg.MAC }

// Stats returns the host's counters.
func (h *Host) Stats() Stats {
	return Stats{FramesOut: h.framesOut.Load(), FramesIn: h.framesIn.Load(), Delivered: h.delivered.Load(),
		Malformed: h.malformed.Load(), NotMine: h.notMine.Load(), NoSocket: h.noSocket.Load(),
		QueueFull: h.queueFull.Load()}
}

// Close closes every socket and the link, and waits for the reader.
func (h *Host) Close() error {
	var err error
	h.once.Do(func() {
		close(h.done)
		h.mu.Lock()
		var all []*Conn
		for _, cs := range h.socks {
			all = append(all, cs...)
		}
		h.mu.Unlock()
		for _, c := range all {
			c.Close()
		}
		err = h.cfg.Link.Close()
		if errors.Is(err, port.ErrClosed) {
			err = nil
		}
		h.wg.Wait()
	})
	return err
}

// ListenOptions modify ListenUDP.
type ListenOptions struct {
	// Reuse lets several sockets bind one port (SO_REUSEPORT): each datagram goes to one of
	// them, chosen by its source address, so one sender's datagrams stay in order.
	Reuse bool
}

// ListenUDP binds a socket to port (0: an unused port of the ephemeral range).
func (h *Host) ListenUDP(p uint16, opts ...ListenOptions) (*Conn, error) {
	var o ListenOptions
	for _, x := range opts {
		o = x
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.done:
		return nil, ErrClosed
	default:
	}
	if p == 0 {
		for i := 0; i < 1<<15; i++ {
			cand := h.next
			h.next++
			if h.next == 0 {
				h.next = 32768
			}
			if len(h.socks[cand]) == 0 {
				p = cand
				break
			}
		}
		if p == 0 {
			return nil, fmt.Errorf("hostshim: %v: no free port", h.cfg.Addr)
		}
	}
	cs := h.socks[p]
	if len(cs) > 0 && !(o.Reuse && cs[0].reuse) {
		return nil, fmt.Errorf("%w: %v:%d", ErrPortInUse, h.cfg.Addr, p)
	}
	c := &Conn{h: h, local: netip.AddrPortFrom(h.cfg.Addr, p), reuse: o.Reuse,
		rx: make(chan datagram, h.cfg.Queue), closed: make(chan struct{})}
	c.rdl.init()
	h.socks[p] = append(cs, c)
	return c, nil
}

// WrapConn returns a function for client.Config.WrapConn or lockserver.Config.WrapConn: it
// closes the real socket it is given and returns a socket of this host bound to p (0: an
// ephemeral port; several sockets of one server share p). A socket it cannot bind is
// reported as a socket whose every call fails.
func (h *Host) WrapConn(p uint16) func(net.PacketConn) net.PacketConn {
	return func(real net.PacketConn) net.PacketConn {
		real.Close()
		c, err := h.ListenUDP(p, ListenOptions{Reuse: p != 0})
		if err != nil {
			return failedConn{err: err, local: netip.AddrPortFrom(h.cfg.Addr, p)}
		}
		return c
	}
}

func (h *Host) unbind(c *Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := c.local.Port()
	cs := h.socks[p]
	for i, x := range cs {
		if x == c {
			cs = append(cs[:i:i], cs[i+1:]...)
			break
		}
	}
	if len(cs) == 0 {
		delete(h.socks, p)
	} else {
		h.socks[p] = cs
	}
}

// send writes one frame from c to dst.
func (h *Host) send(src, dst netip.AddrPort, b []byte) error {
	h.sendMu.Lock()
	defer h.sendMu.Unlock()
	h.sendBuf = udpframe.Append(h.sendBuf[:0], udpframe.Endpoint{MAC: h.cfg.MAC, Addr: src},
		udpframe.Endpoint{MAC: h.cfg.Gateway, Addr: dst}, b)
	if err := h.cfg.Link.Send(h.sendBuf); err != nil {
		if errors.Is(err, port.ErrClosed) {
			return ErrClosed
		}
		return err
	}
	h.framesOut.Add(1)
	return nil
}

var broadcast = MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// read is the host's NIC: frames from the link to the sockets.
func (h *Host) read() {
	defer h.wg.Done()
	buf := make([]byte, port.MaxFrame)
	var f udpframe.Frame
	for {
		n, err := h.cfg.Link.Recv(buf)
		if err != nil {
			select {
			case <-h.done:
				return
			default:
			}
			if errors.Is(err, port.ErrClosed) {
				return
			}
			continue // a transient error of a UDP tunnel (ICMP unreachable)
		}
		h.framesIn.Add(1)
		if err := udpframe.Parse(buf[:n], &f); err != nil {
			h.malformed.Add(1)
			h.cfg.Logger.Debug("hostshim: dropped frame", "host", h.cfg.Addr, "err", err)
			continue
		}
		if f.Dst.Addr() != h.cfg.Addr || (f.DstMAC != h.cfg.MAC && f.DstMAC != broadcast) {
			h.notMine.Add(1)
			continue
		}
		h.deliver(&f)
	}
}

func (h *Host) deliver(f *udpframe.Frame) {
	h.mu.Lock()
	cs := h.socks[f.Dst.Port()]
	var c *Conn
	switch len(cs) {
	case 0:
	case 1:
		c = cs[0]
	default:
		a := f.Src.Addr().As4()
		x := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
		x = (x ^ uint32(f.Src.Port())) * 0x9E3779B1
		c = cs[(x>>16)%uint32(len(cs))]
	}
	h.mu.Unlock()
	if c == nil {
		h.noSocket.Add(1)
		return
	}
	bp := h.bufs.Get().(*[]byte)
	d := datagram{buf: bp, n: copy(*bp, f.Payload), from: f.Src}
	h.delivered.Add(1) // before the reader can see it
	select {
	case c.rx <- d:
	default:
		h.delivered.Add(^uint64(0))
		h.bufs.Put(bp)
		h.queueFull.Add(1)
	}
}

type datagram struct {
	buf  *[]byte
	n    int
	from netip.AddrPort
}

// Conn is a UDP socket of a Host: a net.PacketConn. Several goroutines may use it at once.
type Conn struct {
	h      *Host
	local  netip.AddrPort
	reuse  bool
	rx     chan datagram
	closed chan struct{}
	once   sync.Once
	rdl    deadline
}

var _ net.PacketConn = (*Conn)(nil)

// ReadFrom waits for a datagram (until the read deadline) and copies it into p; a longer
// datagram is truncated, as a UDP socket does. The source is a *net.UDPAddr.
func (c *Conn) ReadFrom(p []byte) (int, net.Addr, error) {
	n, from, err := c.ReadFromUDPAddrPort(p)
	if err != nil {
		return 0, nil, err
	}
	return n, net.UDPAddrFromAddrPort(from), nil
}

// ReadFromUDPAddrPort is ReadFrom returning a netip.AddrPort (no allocation without a
// deadline).
func (c *Conn) ReadFromUDPAddrPort(p []byte) (int, netip.AddrPort, error) {
	for {
		select {
		case <-c.closed:
			return 0, netip.AddrPort{}, c.opErr("read", ErrClosed)
		default:
		}
		t, changed := c.rdl.get()
		var expired <-chan time.Time
		var timer *time.Timer
		if !t.IsZero() {
			d := time.Until(t)
			if d <= 0 {
				return 0, netip.AddrPort{}, c.opErr("read", os.ErrDeadlineExceeded)
			}
			timer = time.NewTimer(d)
			expired = timer.C
		}
		select {
		case d := <-c.rx:
			if timer != nil {
				timer.Stop()
			}
			n := copy(p, (*d.buf)[:d.n])
			c.h.bufs.Put(d.buf)
			return n, d.from, nil
		case <-c.closed:
			if timer != nil {
				timer.Stop()
			}
			return 0, netip.AddrPort{}, c.opErr("read", ErrClosed)
		case <-expired:
			return 0, netip.AddrPort{}, c.opErr("read", os.ErrDeadlineExceeded)
		case <-changed:
			if timer != nil {
				timer.Stop()
			}
			// The deadline moved: look again.
		}
	}
}

// WriteTo sends p to addr (a *net.UDPAddr or any net.Addr whose String is ip:port) as one
// frame.
func (c *Conn) WriteTo(p []byte, addr net.Addr) (int, error) {
	var dst netip.AddrPort
	switch a := addr.(type) {
	case *net.UDPAddr:
		dst = a.AddrPort()
	default:
		var err error
		if dst, err = netip.ParseAddrPort(addr.String()); err != nil {
			return 0, c.opErr("write", err)
		}
	}
	return c.WriteToUDPAddrPort(p, dst)
}

// WriteToUDPAddrPort is WriteTo with a netip.AddrPort (no allocation).
func (c *Conn) WriteToUDPAddrPort(p []byte, dst netip.AddrPort) (int, error) {
	select {
	case <-c.closed:
		return 0, c.opErr("write", ErrClosed)
	default:
	}
	dst = netip.AddrPortFrom(dst.Addr().Unmap(), dst.Port())
	if !dst.Addr().Is4() {
		return 0, c.opErr("write", fmt.Errorf("hostshim: %v is not an IPv4 address", dst))
	}
	if len(p) > MaxDatagram {
		return 0, c.opErr("write", ErrTooLarge)
	}
	if err := c.h.send(c.local, dst, p); err != nil {
		return 0, c.opErr("write", err)
	}
	return len(p), nil
}

func (c *Conn) opErr(op string, err error) error {
	return &net.OpError{Op: op, Net: "udp", Addr: net.UDPAddrFromAddrPort(c.local), Err: err}
}

// Close unbinds the socket; blocked reads return.
func (c *Conn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		c.h.unbind(c)
		for {
			select {
			case d := <-c.rx:
				c.h.bufs.Put(d.buf)
			default:
				return
			}
		}
	})
	return nil
}

// LocalAddr is the socket's address on its host.
func (c *Conn) LocalAddr() net.Addr { return net.UDPAddrFromAddrPort(c.local) }

// AddrPort is the socket's address on its host.
func (c *Conn) AddrPort() netip.AddrPort { return c.local }

// SetDeadline sets the read deadline (writes never block).
func (c *Conn) SetDeadline(t time.Time) error { return c.SetReadDeadline(t) }

// SetReadDeadline sets the time after which ReadFrom fails with os.ErrDeadlineExceeded; the
// zero time means none.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.rdl.set(t)
	return nil
}

// SetWriteDeadline is accepted and ignored: writes never block.
func (c *Conn) SetWriteDeadline(time.Time) error { return nil }

// deadline is a read deadline that pending reads follow when it changes.
type deadline struct {
	mu      sync.Mutex
	t       time.Time
	changed chan struct{} // closed (and replaced) when t changes
}

func (d *deadline) init() { d.changed = make(chan struct{}) }

func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.t = t
	close(d.changed)
	d.changed = make(chan struct{})
}

func (d *deadline) get() (time.Time, <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.t, d.changed
}

// failedConn is a socket WrapConn could not bind: every call fails with err.
type failedConn struct {
	err   error
	local netip.AddrPort
}

func (f failedConn) ReadFrom([]byte) (int, net.Addr, error) { return 0, nil, f.err }
func (f failedConn) WriteTo([]byte, net.Addr) (int, error)  { return 0, f.err }
func (f failedConn) Close() error                           { return nil }
func (f failedConn) LocalAddr() net.Addr                    { return net.UDPAddrFromAddrPort(f.local) }
func (f failedConn) SetDeadline(time.Time) error            { return nil }
func (f failedConn) SetReadDeadline(time.Time) error        { return nil }
func (f failedConn) SetWriteDeadline(time.Time) error       { return nil }
