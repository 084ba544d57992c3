package port

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// CapturePort wraps a port and writes the frames it sends and receives to
// pcap streams (link type Ethernet), like bmv2's --pcap per-port files.
type CapturePort struct {
	Port
	mu      sync.Mutex
	in, out *pcapgo.Writer // nil: that direction is not captured
	closers []io.Closer
	now     func() time.Time
}

// WithCapture wraps p so that every frame sent or received is appended to w
// as a pcap record. The pcap file header is written immediately. If w is an
// io.Closer, Close closes it after the port.
func WithCapture(p Port, w io.Writer) (*CapturePort, error) {
	pw, err := newPcap(p, w)
	if err != nil {
		return nil, err
	}
	c := &CapturePort{Port: p, in: pw, out: pw, now: time.Now}
	if cl, ok := w.(io.Closer); ok {
		c.closers = append(c.closers, cl)
	}
	return c, nil
}

// WithCaptureSplit is WithCapture with one stream for received frames (in)
// and one for sent frames (out), as bmv2 writes <port>_in.pcap and
// <port>_out.pcap. A nil writer leaves that direction uncaptured.
func WithCaptureSplit(p Port, in, out io.Writer) (*CapturePort, error) {
	c := &CapturePort{Port: p, now: time.Now}
	for _, d := range []struct {
		w   io.Writer
		dst **pcapgo.Writer
	}{{in, &c.in}, {out, &c.out}} {
		if d.w == nil {
			continue
		}
		pw, err := newPcap(p, d.w)
		if err != nil {
			return nil, err
		}
		*d.dst = pw
		if cl, ok := d.w.(io.Closer); ok {
			c.closers = append(c.closers, cl)
		}
	}
	return c, nil
}

func newPcap(p Port, w io.Writer) (*pcapgo.Writer, error) {
	pw := pcapgo.NewWriter(w)
	if err := pw.WriteFileHeader(MaxFrame, layers.LinkTypeEthernet); err != nil {
		return nil, fmt.Errorf("port: pcap header for %s: %w", p.Name(), err)
	}
	return pw, nil
}

func (c *CapturePort) record(w *pcapgo.Writer, frame []byte) {
	if w == nil {
		return
	}
	ci := gopacket.CaptureInfo{Timestamp: c.now(), CaptureLength: len(frame), Length: len(frame)}
	c.mu.Lock()
	_ = w.WritePacket(ci, frame)
	c.mu.Unlock()
}

// Send implements Port.
func (c *CapturePort) Send(frame []byte) error {
	err := c.Port.Send(frame)
	if err == nil {
		c.record(c.out, frame)
	}
	return err
}

// Recv implements Port.
func (c *CapturePort) Recv(buf []byte) (int, error) {
	n, err := c.Port.Recv(buf)
	if err == nil {
		c.record(c.in, buf[:n])
	}
	return n, err
}

// Close closes the port and then the capture writers that are io.Closers.
func (c *CapturePort) Close() error {
	err := c.Port.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cl := range c.closers {
		if e := cl.Close(); err == nil {
			err = e
		}
	}
	c.closers = nil
	return err
}
