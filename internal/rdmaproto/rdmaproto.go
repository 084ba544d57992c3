// Package rdmaproto is what the lock server's RDMA tier and its remote clients
// (client/rdmaclient) share: the admin sub-operations that let a remote client join the
// server's emulated RDMA fabric (docs/protocol.md, "RDMA admin"), and an endpoint wrapper that
// lets the owner of an emulated node abandon ALock acquisitions when it shuts the node down.
package rdmaproto

import (
	"errors"
	"net/netip"
	"sync/atomic"

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
}

// DecodeJoin reads an AdminJoin reply.
func DecodeJoin(f *wire.Fields) JoinReply {
	return JoinReply{Node: verbs.NodeID(f.Tenant), Base: verbs.Ptr(f.Token), Locks: int(f.Lock), NIC: f.Client}
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
