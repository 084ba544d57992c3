package p4rtclient

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// State is where a Client stands with its switch.
type State uint8

const (
	// Connecting: no stream to the switch (not yet, or it broke and the client is reconnecting).
	Connecting State = iota
	// Backup: the stream is up and another controller of the role is primary (or there is none
	// with a higher election id yet).
	Backup
	// Primary: this controller may write to the switch.
	Primary
	// Closed: Close was called.
	Closed
)

func (s State) String() string {
	switch s {
	case Connecting:
		return "connecting"
	case Backup:
		return "backup"
	case Primary:
		return "primary"
	case Closed:
		return "closed"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Stats counts what went through the client's stream.
type Stats struct {
	// Streams is how many times the stream to the switch came up (arbitrated); Reconnects how
	// many times it did after a break.
	Streams, Reconnects uint64
	// PacketIns received; PacketInsDropped: a subscriber's buffer was full; PacketInsUnclaimed:
	// no subscriber matched.
	PacketIns, PacketInsDropped, PacketInsUnclaimed uint64
	// PacketOuts queued by SendPacketOut.
	PacketOuts uint64
	// StreamErrors: p4.v1.StreamError messages from the switch (e.g. a refused packet-out).
	StreamErrors uint64
	// SendErrors: stream sends that failed (the stream was breaking).
	SendErrors uint64
	// Ignored: other stream messages (digests, idle timeouts), which this client does not handle.
	Ignored uint64
}

// Client is a P4Runtime controller connection to one switch, built on
// github.com/antoninbas/p4runtime-go-client. It keeps a stream to the switch, takes part in
// primary election, reconnects with backoff when the stream breaks, and gives typed access to
// the pipeline, table entries, the packet replication engine and packet I/O. Its methods are
// safe for concurrent use.
type Client struct {
	cfg  Config
	log  *slog.Logger
	conn *grpc.ClientConn
	rt   *rtClient
	p4   *client.Client

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	done   chan struct{} // the supervisor has returned
	once   sync.Once

	mu      sync.Mutex
	state   State
	changed chan struct{} // closed and replaced at every state change
	sch     *schema       // nil before SetPipeline / LoadPipeline / UseP4Info
	subs    []*Subscription
	stats   Stats

	sendErrs atomic.Uint64
}

// Dial connects to the switch and starts the stream; it does not wait for the stream or for
// arbitration (see WaitPrimary). The connection is made lazily: an unreachable switch shows as
// state Connecting and reconnection attempts, not as an error.
func Dial(cfg Config) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if cfg.TLS != nil {
		creds = credentials.NewTLS(cfg.TLS)
	}
	opts := append([]grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: cfg.Backoff.Initial, Multiplier: 2, Jitter: 0.2, MaxDelay: cfg.Backoff.Max},
			MinConnectTimeout: 5 * time.Second,
		}),
	}, cfg.DialOptions...)
	conn, err := grpc.NewClient(cfg.Addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("controlplane: dial %s: %w", cfg.Addr, err)
	}
	c := &Client{
		cfg:     cfg,
		log:     cfg.Log.With("switch", cfg.Addr, "device", cfg.DeviceID, "election", cfg.ElectionID.String()),
		conn:    conn,
		done:    make(chan struct{}),
		changed: make(chan struct{}),
	}
	c.rt = &rtClient{P4RuntimeClient: p4v1.NewP4RuntimeClient(conn), sendErrs: &c.sendErrs}
	eid := &p4v1.Uint128{High: cfg.ElectionID.High, Low: cfg.ElectionID.Low}
	if cfg.Role != "" {
		c.p4 = client.NewClientForRole(c.rt, cfg.DeviceID, eid, &p4v1.Role{Name: cfg.Role})
	} else {
		c.p4 = client.NewClient(c.rt, cfg.DeviceID, eid)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	go c.supervise()
	return c, nil
}

// P4RT returns the underlying client of github.com/antoninbas/p4runtime-go-client, for the
// helpers this package does not wrap (counters, meters, digests). Its Run must not be called:
// the Client runs the stream.
func (c *Client) P4RT() *client.Client { return c.p4 }

// State returns the client's current state.
func (c *Client) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Changed returns a channel that is closed at the next state change.
func (c *Client) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// IsPrimary reports whether the switch last told this client it is primary.
func (c *Client) IsPrimary() bool { return c.State() == Primary }

// WaitPrimary waits until the client is primary, ctx ends (its error is returned) or the
// client is closed (ErrClosed).
func (c *Client) WaitPrimary(ctx context.Context) error {
	for {
		c.mu.Lock()
		st, ch := c.state, c.changed
		c.mu.Unlock()
		switch st {
		case Primary:
			return nil
		case Closed:
			return ErrClosed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("controlplane: %s: not primary (%s): %w", c.cfg.Addr, st, ctx.Err())
		}
	}
}

// Stats returns the client's counters.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.SendErrors = c.sendErrs.Load()
	return s
}

func (c *Client) setState(s State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == s || c.state == Closed {
		return
	}
	old := c.state
	c.state = s
	close(c.changed)
	c.changed = make(chan struct{})
	c.log.Info("p4runtime: "+s.String(), "was", old.String())
}

// Close ends the stream (the switch then elects another primary), stops reconnecting, closes
// the connection and every packet-in subscription. It logs nothing through the client library.
func (c *Client) Close() error {
	c.once.Do(func() {
		c.cancel()
		<-c.done
		c.conn.Close()
		c.mu.Lock()
		for _, s := range c.subs {
			close(s.ch)
		}
		c.subs = nil
		old := c.state
		c.state = Closed
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
		c.log.Info("p4runtime: closed", "was", old.String())
	})
	return nil
}

// supervise runs the stream, reconnecting with backoff until Close.
func (c *Client) supervise() {
	defer close(c.done)
	failures := 0
	for {
		up := c.runStream()
		c.setState(Connecting)
		if c.ctx.Err() != nil {
			return
		}
		if up {
			failures = 0
		}
		d := c.cfg.Backoff.Delay(failures)
		failures++
		c.log.Debug("p4runtime: reconnecting", "in", d, "attempt", failures)
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-c.ctx.Done():
			t.Stop()
			return
		}
	}
}

// runStream runs one stream until it ends (or Close) and reports whether the switch answered
// its arbitration. The library's Run goroutine, its stream reader and this stream's pump have
// all returned when it returns, so no answer of an old stream can change the state later.
func (c *Client) runStream() bool {
	sctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	ended := make(chan error, 1)
	c.rt.arm(sctx, ended)
	arb := make(chan bool, 16)
	msgs := make(chan *p4v1.StreamMessageResponse, 256)
	over := make(chan struct{})
	pumped := make(chan bool, 1)
	go c.pump(arb, msgs, over, pumped)
	stop := make(chan struct{})
	runErr := make(chan error, 1)
	go func() { runErr <- c.p4.Run(stop, arb, msgs) }()
	noStream := func(err error) bool {
		close(over)
		<-pumped
		c.log.Debug("p4runtime: no stream", "err", err)
		return false
	}
	var why error
	select {
	case err := <-runErr: // the stream could not be opened
		return noStream(err)
	case why = <-ended:
	case <-c.ctx.Done():
		cancel()
		select {
		case why = <-ended:
		case err := <-runErr: // cancelled while the stream was being opened
			return noStream(err)
		}
	}
	close(stop)
	<-runErr
	close(over)
	up := <-pumped
	if c.ctx.Err() == nil {
		c.log.Warn("p4runtime: stream ended", "err", why, "was", c.State().String())
	}
	return up
}

// pump applies one stream's arbitration answers and dispatches its messages until over is
// closed (the library will send no more), then drains what is buffered and reports whether
// any arbitration answer came.
func (c *Client) pump(arb <-chan bool, msgs <-chan *p4v1.StreamMessageResponse, over <-chan struct{}, pumped chan<- bool) {
	up := false
	answer := func(primary bool) {
		if !up {
			up = true
			c.mu.Lock()
			c.stats.Streams++
			if c.stats.Streams > 1 {
				c.stats.Reconnects++
			}
			c.mu.Unlock()
			c.log.Info("p4runtime: stream up")
		}
		if primary {
			c.setState(Primary)
		} else {
			c.setState(Backup)
		}
	}
	for {
		select {
		case p := <-arb:
			answer(p)
		case m := <-msgs:
			c.dispatch(m)
		case <-over:
			for {
				select {
				case p := <-arb:
					answer(p)
				case m := <-msgs:
					c.dispatch(m)
				default:
					pumped <- up
					return
				}
			}
		}
	}
}

func (c *Client) dispatch(m *p4v1.StreamMessageResponse) {
	switch u := m.GetUpdate().(type) {
	case *p4v1.StreamMessageResponse_Packet:
		c.deliver(u.Packet)
	case *p4v1.StreamMessageResponse_Error:
		c.mu.Lock()
		c.stats.StreamErrors++
		c.mu.Unlock()
		c.log.Warn("p4runtime: stream error from the switch", "code", u.Error.GetCanonicalCode(), "message", u.Error.GetMessage())
	default:
		c.mu.Lock()
		c.stats.Ignored++
		c.mu.Unlock()
		c.log.Debug("p4runtime: stream message ignored", "type", fmt.Sprintf("%T", u))
	}
}

// write sends updates in one Write RPC; any failure comes back as a *WriteError (one update)
// or a *BatchError.
func (c *Client) write(ctx context.Context, atomicity p4v1.WriteRequest_Atomicity, ups []Update) error {
	if c.State() == Closed {
		return ErrClosed
	}
	req := &p4v1.WriteRequest{
		DeviceId:   c.cfg.DeviceID,
		ElectionId: &p4v1.Uint128{High: c.cfg.ElectionID.High, Low: c.cfg.ElectionID.Low},
		Role:       c.cfg.Role,
		Atomicity:  atomicity,
	}
	for _, u := range ups {
		req.Updates = append(req.Updates, &p4v1.Update{Type: u.Op, Entity: u.Entity})
	}
	if _, err := c.p4.Write(ctx, req); err != nil {
		errs := writeErrors(err, ups)
		if len(ups) == 1 {
			return errs[0]
		}
		return &BatchError{Errors: errs}
	}
	return nil
}
