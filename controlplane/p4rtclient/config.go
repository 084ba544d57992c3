package p4rtclient

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"google.golang.org/grpc"
)

// Config configures a Client.
type Config struct {
	// Addr is the switch's P4Runtime address, host:port (simple_switch_grpc and netlock switch
	// listen on 9559). Required.
	Addr string
	// DeviceID is the P4Runtime device id of the switch.
	DeviceID uint64
	// ElectionID is this controller's election id, > 0. Among the connected controllers of a
	// role the one with the highest id is primary; the others are backups and take over, the
	// highest first, when the primary's stream ends.
	ElectionID ElectionID
	// Role is the P4Runtime role name; "" is the default role (full access).
	Role string
	// Backoff paces reconnection after the stream to the switch breaks. Zero fields take the
	// defaults (100ms initial, 5s max).
	Backoff Backoff
	// Log receives the client's logs (stream up and down, arbitration, reconnects). Nil
	// discards them. The P4Runtime client library's own logs never appear (see the package doc).
	Log *slog.Logger
	// TLS, if set, secures the connection (internal/tlsconf.Client builds one from PEM files:
	// the CA of the switch's certificate, and the controller's client certificate when the
	// switch authenticates its clients). Nil: plaintext, for a switch on loopback.
	TLS *tls.Config
	// DialOptions are added to the gRPC dial (after the transport credentials and the connect
	// backoff derived from Backoff).
	DialOptions []grpc.DialOption
}

// ElectionID is a P4Runtime election id (a 128-bit number).
type ElectionID struct {
	High, Low uint64
}

func (e ElectionID) String() string {
	if e.High == 0 {
		return fmt.Sprint(e.Low)
	}
	return fmt.Sprintf("%d:%d", e.High, e.Low)
}

// Backoff is an exponential backoff: Initial, doubling up to Max.
type Backoff struct {
	Initial, Max time.Duration
}

// Delay returns the wait before reconnection attempt n (0 is the first after a failure):
// Initial * 2^n, at most Max.
func (b Backoff) Delay(n int) time.Duration {
	d := b.Initial
	for range n {
		if d >= b.Max/2 {
			return b.Max
		}
		d *= 2
	}
	return min(d, b.Max)
}

// ErrConfig is wrapped by every error about a bad Config.
var ErrConfig = errors.New("bad configuration")

// validate checks the Config and fills in defaults.
func (c *Config) validate() error {
	if c.Addr == "" {
		return fmt.Errorf("controlplane: Config.Addr is empty: %w", ErrConfig)
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("controlplane: Config.Addr %q: %v: %w", c.Addr, err, ErrConfig)
	}
	if c.ElectionID == (ElectionID{}) {
		return fmt.Errorf("controlplane: Config.ElectionID is 0: a controller needs an election id > 0 to become primary: %w", ErrConfig)
	}
	if c.Backoff.Initial < 0 || c.Backoff.Max < 0 {
		return fmt.Errorf("controlplane: Config.Backoff %+v is negative: %w", c.Backoff, ErrConfig)
	}
	if c.Backoff.Initial == 0 {
		c.Backoff.Initial = 100 * time.Millisecond
	}
	if c.Backoff.Max == 0 {
		c.Backoff.Max = max(5*time.Second, c.Backoff.Initial)
	}
	if c.Backoff.Max < c.Backoff.Initial {
		return fmt.Errorf("controlplane: Config.Backoff.Max %v < Initial %v: %w", c.Backoff.Max, c.Backoff.Initial, ErrConfig)
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return nil
}
