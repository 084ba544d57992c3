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

// CapturePort wraps a port and writes every frame it sends or receives to a
// pcap stream (link type Ethernet), like bmv2's --pcap per-port files.
type CapturePort struct {
	Port
	mu  sync.Mutex
	w   *pcapgo.Writer
	out io.Writer
	now func() time.Time
}

// WithCapture wraps p so that every frame sent or received is appended to w
// as a pcap record. The pcap file header is written immediately. If w is an
// io.Closer, Close closes it after the port.
func WithCapture(p Port, w io.Writer) (*CapturePort, error) {
	pw := pcapgo.NewWriter(w)
	if err := pw.WriteFileHeader(MaxFrame, layers.LinkTypeEthernet); err != nil {
		return nil, fmt.Errorf("port: pcap header for %s: %w", p.Name(), err)
	}
	return &CapturePort{Port: p, w: pw, out: w, now: time.Now}, nil
}

func (c *CapturePort) record(frame []byte) {
	ci := gopacket.CaptureInfo{Timestamp: c.now(), CaptureLength: len(frame), Length: len(frame)}
	c.mu.Lock()
	_ = c.w.WritePacket(ci, frame)
	c.mu.Unlock()
}

// Send implements Port.
func (c *CapturePort) Send(frame []byte) error {
	err := c.Port.Send(frame)
	if err == nil {
		c.record(frame)
	}
	return err
}

// Recv implements Port.
func (c *CapturePort) Recv(buf []byte) (int, error) {
	n, err := c.Port.Recv(buf)
	if err == nil {
		c.record(buf[:n])
	}
	return n, err
}

// Close closes the port and then the capture writer, if it is an io.Closer.
func (c *CapturePort) Close() error {
	err := c.Port.Close()
	if cl, ok := c.out.(io.Closer); ok {
		c.mu.Lock()
		if e := cl.Close(); err == nil {
			err = e
		}
		c.mu.Unlock()
	}
	return err
}
