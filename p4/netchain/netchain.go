// Package netchain is NetChain used as a lock service (netchain.p4), the switch-only baseline of
// NetLock's Figures 10 and 11 (NetLock, SIGCOMM'20, section 6.1), as a v1model program on
// netlock's wire header: one slot per lock in the switch, every lock exclusive, no queue (an
// acquire of a held lock is rejected would-block and the client retries after a backoff:
// client.NetChainBackoff), a release by the holder only. Load runs it on the engine
// (bmv2/engine); the rack model (testbed/rackmodel, Config.NetChain) runs its switch on it.
//
// How it differs from NetChain (Jin et al., NSDI'18): NetChain replicates every key over a chain
// of switches (chain replication with sequence numbers) and survives switch failures; here the
// one switch holds every slot, nothing is replicated and a failure loses the locks. A slot's
// version (its grants) is the fencing token. A lock id at or beyond the slots is refused
// bad-request: a client maps its locks onto the slots first (client.NetChainLocks, the "lock
// granularity adapted to the switch memory" of NetLock's section 6.1).
package netchain

import (
	_ "embed"
	"fmt"
	"io/fs"
	"net/netip"
	"path"
	"strconv"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/p4/dataplane"
)

// File is the program's file name.
const File = "netchain.p4"

// Source is netchain.p4.
//
//go:embed netchain.p4
var Source []byte

// DefaultSlots is the program's default number of lock slots (NETCHAIN_SLOTS): 2^17, about the
// 130 000 lock states of the NetChain baseline in NetLock's own repository
// (switch_code/netchain, LENGTH_ARRAY).
const DefaultSlots = 1 << 17

// Names in the program, for the engine's runtime API and for tests.
const (
	TableRoute     = "NetChainIngress.ipv4_lpm"
	KeyRouteDst    = "dst"
	ActionRoute    = "NetChainIngress.route"
	RegisterHolder = "NetChainIngress.holder"
	RegisterGrants = "NetChainIngress.version"
)

// Defines returns the preprocessor macros of a program with slots lock slots (0: DefaultSlots).
func Defines(slots int) map[string]string {
	if slots <= 0 {
		slots = DefaultSlots
	}
	return map[string]string{"NETCHAIN_SLOTS": strconv.Itoa(slots)}
}

// Check runs the front end (bmv2/front) on src (nil: Source) with slots lock slots.
func Check(src []byte, slots int) (*front.Checked, error) {
	if src == nil {
		src = Source
	}
	read := func(name string) ([]byte, error) {
		if path.Clean(name) == File {
			return src, nil
		}
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	c, err := front.LoadOptions(File, front.Options{Defines: Defines(slots), ReadFile: read})
	if err != nil {
		return nil, fmt.Errorf("netchain: %w", err)
	}
	return c, nil
}

// Switch is netchain.p4 on the engine.
type Switch struct {
	*engine.Switch
	Slots int
}

// Load compiles src (nil: Source) with slots lock slots (0: DefaultSlots) into a new engine
// switch.
func Load(src []byte, slots int, cfg engine.Config) (*Switch, error) {
	if slots <= 0 {
		slots = DefaultSlots
	}
	c, err := Check(src, slots)
	if err != nil {
		return nil, err
	}
	sw, err := engine.Load(c, cfg)
	if err != nil {
		return nil, fmt.Errorf("netchain: %w", err)
	}
	return &Switch{Switch: sw, Slots: slots}, nil
}

// AddRoute writes an IPv4 route: frames to p leave on h.Port with h's MACs.
func (sw *Switch) AddRoute(p netip.Prefix, h dataplane.NextHop) error {
	t, err := sw.Table(TableRoute)
	if err != nil {
		return fmt.Errorf("netchain: %w", err)
	}
	key, plen, err := dataplane.RouteMatch(p)
	if err != nil {
		return err
	}
	_, args := h.Action()
	if err := t.Insert(engine.Entry{Match: []engine.FieldMatch{{Name: KeyRouteDst, Value: key, PrefixLen: plen}},
		Action: ActionRoute, Args: args}); err != nil {
		return fmt.Errorf("netchain: route %v: %w", p, err)
	}
	return nil
}

// Holder returns the txn holding slot (0: free) and the slot's grants so far.
func (sw *Switch) Holder(slot uint32) (txn, grants uint64, err error) {
	for i, name := range []string{RegisterHolder, RegisterGrants} {
		r, err := sw.Register(name)
		if err != nil {
			return 0, 0, fmt.Errorf("netchain: %w", err)
		}
		b, err := r.Read(int(slot))
		if err != nil {
			return 0, 0, fmt.Errorf("netchain: %s[%d]: %w", name, slot, err)
		}
		var v uint64
		for _, x := range b {
			v = v<<8 | uint64(x)
		}
		if i == 0 {
			txn = v
		} else {
			grants = v
		}
	}
	return txn, grants, nil
}
