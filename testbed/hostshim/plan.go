package hostshim

import (
	"fmt"
	"net/netip"
)

// MACFor is the MAC of an IPv4 address in the virtual rack: the locally administered unicast
// address 02:00:a:b:c:d for a.b.c.d, so every address has its own MAC and a MAC names its
// address in captures.
func MACFor(a netip.Addr) MAC {
	b := a.Unmap().As4()
	return MAC{0x02, 0x00, b[0], b[1], b[2], b[3]}
}

// Plan is the virtual rack's address plan within a /16 (Net, default 10.0.0.0/16):
//
//	x.y.0.1          the switch (its data-plane address: overflow and queue-empty come from it)
//	x.y.0.2          the control plane
//	x.y.1.i          lock server i (1..254)
//	x.y.(2+k).j      client i, with i-1 = 254*k + (j-1) (clients 1..254*254)
//
// Every address's MAC is MACFor(address). Switch ports are the wiring's business, not the
// plan's: a rack built on the plan decides which host is on which port.
type Plan struct {
	// Net is the rack's /16. The zero Plan uses 10.0.0.0/16.
	Net netip.Prefix
}

// DefaultPlan is 10.0.0.0/16.
var DefaultPlan = Plan{Net: netip.MustParsePrefix("10.0.0.0/16")}

func (p Plan) base() [4]byte {
	if !p.Net.IsValid() {
		return [4]byte{10, 0, 0, 0}
	}
	return p.Net.Masked().Addr().As4()
}

// Validate checks that Net is an IPv4 /16 (or unset).
func (p Plan) Validate() error {
	if p.Net.IsValid() && (!p.Net.Addr().Is4() || p.Net.Bits() != 16) {
		return fmt.Errorf("hostshim: plan: %v is not an IPv4 /16", p.Net)
	}
	return nil
}

func (p Plan) addr(c, d byte) netip.Addr {
	b := p.base()
	return netip.AddrFrom4([4]byte{b[0], b[1], c, d})
}

// Switch is the switch's address.
func (p Plan) Switch() netip.Addr { return p.addr(0, 1) }

// Controller is the control plane's address.
func (p Plan) Controller() netip.Addr { return p.addr(0, 2) }

// Server is lock server i's address (i in 1..254); it panics outside.
func (p Plan) Server(i int) netip.Addr {
	if i < 1 || i > 254 {
		panic(fmt.Sprintf("hostshim: server %d out of 1..254", i))
	}
	return p.addr(1, byte(i))
}

// MaxClients is the number of client addresses a plan has.
const MaxClients = 254 * 254

// Client is client i's address (i in 1..MaxClients); it panics outside.
func (p Plan) Client(i int) netip.Addr {
	if i < 1 || i > MaxClients {
		panic(fmt.Sprintf("hostshim: client %d out of 1..%d", i, MaxClients))
	}
	return p.addr(byte(2+(i-1)/254), byte(1+(i-1)%254))
}
