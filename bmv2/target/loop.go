package target

import (
	"errors"
	"fmt"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/port"
)

// ErrStarted is returned by AddPort once the packet loop runs.
var ErrStarted = errors.New("target: ports are fixed once started")

// AddPort attaches p as switch port num. Ports are added before Start; the
// Device owns p from then on and closes it in Close.
func (d *Device) AddPort(num int, p port.Port) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.started || d.closed {
		return ErrStarted
	}
	if num < 0 || num >= engine.DropPort {
		return fmt.Errorf("target: port number %d out of range [0, %d)", num, engine.DropPort)
	}
	if num == d.opts.CPUPort && num != 0 {
		return fmt.Errorf("target: port %d is the CPU port", num)
	}
	if _, ok := d.ports[num]; ok {
		return fmt.Errorf("target: port %d attached twice", num)
	}
	d.ports[num] = p
	return nil
}

// Start runs one reader goroutine per port: every frame received goes
// through the pipeline and its outputs to their egress ports.
func (d *Device) Start() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.started || d.closed {
		return
	}
	d.started = true
	for num, p := range d.ports {
		d.wg.Add(1)
		go d.read(num, p)
	}
}

// Close closes every port and waits for the readers. The Device keeps its
// pipeline and answers the control plane afterwards, but forwards nothing.
func (d *Device) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	ports := make([]port.Port, 0, len(d.ports))
	for _, p := range d.ports {
		ports = append(ports, p)
	}
	d.mu.Unlock()
	var first error
	for _, p := range ports {
		if err := p.Close(); err != nil && first == nil && !errors.Is(err, port.ErrClosed) {
			first = err
		}
	}
	d.wg.Wait()
	return first
}

// Stats returns the packet counts so far.
func (d *Device) Stats() Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stats
}

func (d *Device) read(num int, p port.Port) {
	defer d.wg.Done()
	buf := make([]byte, port.MaxFrame)
	for {
		n, err := p.Recv(buf)
		if err != nil {
			if errors.Is(err, port.ErrClosed) {
				return
			}
			d.mu.Lock()
			closed := d.closed
			d.mu.Unlock()
			if closed {
				return
			}
			continue // a transient receive error (e.g. ICMP unreachable on UDP)
		}
		d.Inject(num, buf[:n])
	}
}

// Inject runs one frame through the pipeline as received on port num and
// sends the outputs; the packet loop calls it for every received frame.
// It does not retain frame.
func (d *Device) Inject(num int, frame []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stats.Received++
	log := d.opts.Log
	if log != nil {
		log(fmt.Sprintf("Processing packet received on port %d (%d bytes)", num, len(frame)))
	}
	if d.sw == nil {
		d.stats.Errors++
		if d.opts.Drop != nil {
			d.opts.Drop(DropNoProgram, num, frame, nil)
		}
		if log != nil {
			log(fmt.Sprintf("Dropping packet received on port %d: no P4 program installed", num))
		}
		return
	}
	res, err := d.sw.Process(num, frame)
	if err != nil {
		d.stats.Errors++
		if d.opts.Drop != nil {
			d.opts.Drop(DropPipelineError, num, frame, err)
		}
		if log != nil {
			log(fmt.Sprintf("Dropping packet received on port %d: %v", num, err))
		}
		return
	}
	d.emitLocked(num, frame, res)
}

// emitLocked sends a result's outputs to their ports. Precondition: d.mu is
// held (the result's buffers belong to the engine until the next Process).
func (d *Device) emitLocked(in int, frame []byte, res *engine.Result) {
	log := d.opts.Log
	if len(res.Out) == 0 && len(res.PacketIn) == 0 {
		d.stats.Dropped++
		if d.opts.Drop != nil {
			d.opts.Drop(DropNoOutput, in, frame, nil)
		}
		if log != nil {
			log(fmt.Sprintf("Dropping packet received on port %d (%d bytes): no output", in, len(frame)))
		}
		return
	}
	for _, o := range res.Out {
		if o.Port == d.opts.CPUPort && d.opts.CPUPort != 0 {
			continue // delivered as a packet-in by the engine
		}
		p := d.ports[o.Port]
		if p == nil {
			d.stats.Dropped++
			if d.opts.Drop != nil {
				d.opts.Drop(DropNoPort, o.Port, o.Data, nil)
			}
			if log != nil {
				log(fmt.Sprintf("Dropping packet of size %d for port %d: no such port", len(o.Data), o.Port))
			}
			continue
		}
		if log != nil {
			log(fmt.Sprintf("Transmitting packet of size %d out of port %d", len(o.Data), o.Port))
		}
		if err := p.Send(o.Data); err == nil {
			d.stats.Transmitted++
		} else if log != nil {
			log(fmt.Sprintf("Sending on port %d failed: %v", o.Port, err))
		}
	}
}
