// Package udpbatch reads and writes UDP datagrams in batches without allocating: recvmmsg and
// sendmmsg on Linux (64-bit), one datagram per call elsewhere. Addresses are netip.AddrPort values.
//
// A [Reader] and a [Writer] each own fixed buffers, headers and address slots, allocated once; they
// may be used by different goroutines on the same socket, but each by one goroutine at a time.
// golang.org/x/net/ipv4's batch calls allocate a net.UDPAddr per datagram; these do not.
package udpbatch

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
)

// ErrTooLarge is returned by Writer.Add for a datagram larger than the writer's buffers.
var ErrTooLarge = errors.New("udpbatch: datagram larger than buffer")

// Reader reads datagrams from a UDP socket in batches.
type Reader struct {
	conn *net.UDPConn
	bufs [][]byte
	lens []int
	from []netip.AddrPort
	n    int
	sys  readerSys
}

// NewReader returns a Reader reading up to batch datagrams of up to size bytes per call.
func NewReader(c *net.UDPConn, batch, size int) (*Reader, error) {
	if batch < 1 || size < 1 {
		return nil, fmt.Errorf("udpbatch: batch %d and size %d must be positive", batch, size)
	}
	r := &Reader{conn: c, bufs: make([][]byte, batch), lens: make([]int, batch), from: make([]netip.AddrPort, batch)}
	for i := range r.bufs {
		r.bufs[i] = make([]byte, size)
	}
	if err := r.sys.init(r); err != nil {
		return nil, fmt.Errorf("udpbatch: %w", err)
	}
	return r, nil
}

// Read waits for at least one datagram and returns how many it read. A datagram longer than the
// buffer is truncated to it. Read honours the socket's read deadline and returns an error matching
// net.ErrClosed after the socket is closed.
func (r *Reader) Read() (int, error) {
	n, err := r.sys.read(r)
	r.n = n
	return n, err
}

// Packet returns datagram i of the last Read: its bytes (valid until the next Read) and sender.
func (r *Reader) Packet(i int) ([]byte, netip.AddrPort) { return r.bufs[i][:r.lens[i]], r.from[i] }

// Writer collects datagrams and sends them in batches.
type Writer struct {
	conn *net.UDPConn
	bufs [][]byte
	lens []int
	to   []netip.AddrPort
	n    int
	sys  writerSys
	// Errors counts datagrams that could not be sent (and were dropped).
	Errors uint64
}

// NewWriter returns a Writer holding up to batch datagrams of up to size bytes.
func NewWriter(c *net.UDPConn, batch, size int) (*Writer, error) {
	if batch < 1 || size < 1 {
		return nil, fmt.Errorf("udpbatch: batch %d and size %d must be positive", batch, size)
	}
	w := &Writer{conn: c, bufs: make([][]byte, batch), lens: make([]int, batch), to: make([]netip.AddrPort, batch)}
	for i := range w.bufs {
		w.bufs[i] = make([]byte, size)
	}
	if err := w.sys.init(w); err != nil {
		return nil, fmt.Errorf("udpbatch: %w", err)
	}
	return w, nil
}

// Len returns the number of datagrams waiting to be sent; Cap how many the writer holds.
func (w *Writer) Len() int { return w.n }
func (w *Writer) Cap() int { return len(w.bufs) }

// Next returns the buffer of the next datagram, to encode into before Commit. If the writer is
// full it is flushed first.
func (w *Writer) Next() []byte {
	if w.n == len(w.bufs) {
		_, _ = w.Flush()
	}
	return w.bufs[w.n]
}

// Commit queues the first n bytes of the buffer Next returned, for sending to to.
func (w *Writer) Commit(n int, to netip.AddrPort) {
	w.lens[w.n], w.to[w.n] = n, to
	w.n++
}

// Add copies b and queues it for sending to to.
func (w *Writer) Add(b []byte, to netip.AddrPort) error {
	buf := w.Next()
	if len(b) > len(buf) {
		return ErrTooLarge
	}
	w.Commit(copy(buf, b), to)
	return nil
}

// Flush sends every queued datagram and returns how many were sent. A datagram the kernel refuses
// is dropped and counted in Errors; the others are still sent. The error is the first refusal.
func (w *Writer) Flush() (int, error) {
	if w.n == 0 {
		return 0, nil
	}
	sent, err := w.sys.write(w)
	w.n = 0
	return sent, err
}
