// Package rdmaproto is what the lock server's RDMA tier and its remote clients
// (client/rdmaclient) share: the admin sub-operations that let a remote client join the
// server's emulated RDMA fabric (docs/protocol.md, "RDMA admin"), and an endpoint wrapper that
// lets the owner of an emulated node abandon ALock acquisitions when it shuts the node down.
package rdmaproto

import (
	"errors"
	"net/netip"
	"sync/atomic"

	"github.com/netlock-go/netlock/rdma/rma"
	"github.com/netlock-go/netlock/rdma/verbs"
	"github.com/netlock-go/netlock/wire"
)

// Admin sub-operations of the RDMA tier; see wire.AdminRDMAJoin and wire.AdminRDMAPeer.
const (
	AdminJoin = wire.AdminRDMAJoin
	AdminPeer = wire.AdminRDMAPeer
)

// ServerNode is the emulated node id of a lock server's NIC; joined nodes get 1, 2, ...
const ServerNode verbs.NodeID = 0

// JoinReply is the decoded answer to AdminJoin.
type JoinReply struct {
	Node  verbs.NodeID
	Base  verbs.Ptr
	Locks int
	NIC   netip.AddrPort
	// RW is set when the table is an RMA-RW table (rdma/rma) with parameters Params; otherwise
	// it is an ALock table.
	RW     bool
	Params rma.TableParams
}

// DecodeJoin reads an AdminJoin reply.
func DecodeJoin(f *wire.Fields) JoinReply {
	j := JoinReply{Node: verbs.NodeID(f.Tenant), Base: verbs.Ptr(f.Token), Locks: int(f.Lock), NIC: f.Client}
	if f.Timestamp != 0 {
		j.RW, j.Params = true, UnpackParams(f.Timestamp)
	}
	return j
}

// PackParams packs an RMA-RW table's parameters into the timestamp field of a join answer:
// counters in bits 0-15, T_L,1 in 16-31, T_L,2 in 32-47, T_R in 48-63 (never 0: T_L,1 >= 1).
// An ALock table's answer carries 0.
func PackParams(p rma.TableParams) uint64 {
	return uint64(p.Counters) | uint64(p.TL[0])<<16 | uint64(p.TL[1])<<32 | uint64(p.TR)<<48
}

// UnpackParams reverses PackParams.
func UnpackParams(v uint64) rma.TableParams {
	return rma.TableParams{Counters: int(v & 0xffff), TL: [2]int{int(v >> 16 & 0xffff), int(v >> 32 & 0xffff)}, TR: int(v >> 48)}
}

// ErrAborted is returned by Do when the endpoint's owner aborted a spin.
var ErrAborted = errors.New("rdmaproto: acquisition abandoned: the node is shutting down")

// abortPanic unwinds a spinning lock algorithm; Do recovers it.
type abortPanic struct{}

// Endpoint wraps a verbs.Endpoint for a lock algorithm whose spins must be abandonable: once
// stop is set, every local spin (Memory.Await) unwinds with a panic that Do turns into
// ErrAborted, and every post fails. ALock has no abortable acquisition; this is only sound when
// the whole table (or the whole client node) is being discarded, since the abandoned thread's
// descriptor stays in the lock's queue.
type Endpoint struct {
	verbs.Endpoint
	mem     abortMem
	stop    *atomic.Bool
	resolve func(verbs.NodeID) error
}

// Wrap wraps ep. resolve, if set, is called with the target node of every posted request
// before it is posted (a client connects to peers it has not seen on first use).
func Wrap(ep verbs.Endpoint, stop *atomic.Bool, resolve func(verbs.NodeID) error) *Endpoint {
	return &Endpoint{Endpoint: ep, mem: abortMem{Memory: ep.Local(), stop: stop}, stop: stop, resolve: resolve}
}

// Local implements verbs.Endpoint.
func (e *Endpoint) Local() verbs.Memory { return e.mem }

// PostSend implements verbs.Endpoint.
func (e *Endpoint) PostSend(wrs ...verbs.WorkRequest) error {
	if e.stop.Load() {
		return ErrAborted
	}
	if e.resolve != nil {
		for i := range wrs {
			if err := e.resolve(wrs[i].Remote.Node()); err != nil {
				return err
			}
		}
	}
	return e.Endpoint.PostSend(wrs...)
}

type abortMem struct {
	verbs.Memory
	stop *atomic.Bool
}

func (m abortMem) Await(cond func() bool, offs ...uint64) {
	m.Memory.Await(func() bool {
		if m.stop.Load() {
			panic(abortPanic{})
		}
		return cond()
	}, offs...)
}

// Do runs f (a Lock or Unlock on a handle of a wrapped endpoint) and turns an abort into
// ErrAborted. After ErrAborted the handle is unusable.
func Do(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(abortPanic); !ok {
				panic(r)
			}
			err = ErrAborted
		}
	}()
	return f()
}
