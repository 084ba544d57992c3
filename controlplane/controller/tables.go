package controller

import (
	"context"
	"errors"
	"fmt"

	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/controlplane/p4rtclient"
	"github.com/netlock-go/netlock/p4/dataplane"
)

// write turns a core Write into P4Runtime updates of p4/netlock.p4's tables (dataplane's names)
// and sends them in one Write RPC.
func (c *Controller) write(ctx context.Context, cl *p4rtclient.Client, w ctlcore.Write) error {
	var ups []p4rtclient.Update
	for _, u := range w.Updates {
		us, err := c.updates(cl, u)
		if err != nil {
			return err
		}
		ups = append(ups, us...)
	}
	err := cl.Write(ctx, w.Atomic, ups...)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, p4rtclient.ErrNotFound):
		return fmt.Errorf("%w: %w", ctlcore.ErrNotFound, err)
	case errors.Is(err, p4rtclient.ErrAlreadyExists):
		return fmt.Errorf("%w: %w", ctlcore.ErrAlreadyExists, err)
	}
	return err
}

func op(o ctlcore.Op) p4rtclient.Update {
	switch o {
	case ctlcore.Insert:
		return p4rtclient.Update{Op: p4rtclient.Insert}
	case ctlcore.Delete:
		return p4rtclient.Update{Op: p4rtclient.Delete}
	}
	return p4rtclient.Update{Op: p4rtclient.Modify}
}

func params(names []string, args [][]byte) []p4rtclient.Param {
	ps := make([]p4rtclient.Param, len(names))
	for i, n := range names {
		ps[i] = p4rtclient.Param{Name: n, Value: args[i]}
	}
	return ps
}

// updates renders one core update as P4Runtime updates.
func (c *Controller) updates(cl *p4rtclient.Client, u ctlcore.Update) ([]p4rtclient.Update, error) {
	e := u.Entity
	o := op(u.Op).Op
	// TableUpdates writes every Pipeline's copy of a table (one in a program of one Pipeline;
	// the Tofino 1 fold's tables are in both: p4rtclient's schema).
	switch {
	case e.Rack != nil:
		name, args, err := e.Rack.Action()
		if err != nil {
			return nil, err
		}
		return cl.TableUpdates(p4rtclient.Modify, p4rtclient.Entry{Table: dataplane.TableRack, Default: true,
			Action: name, Params: params(dataplane.ParamsSetRack, args)})
	case e.Server != nil:
		name, args, err := e.Server.Action()
		if err != nil {
			return nil, err
		}
		return cl.TableUpdates(o, p4rtclient.Entry{Table: dataplane.TableServers,
			Match:  []p4rtclient.Match{p4rtclient.Exact{Field: dataplane.KeyServer, Value: dataplane.ServerMatch(e.ServerNum)}},
			Action: name, Params: params(dataplane.ParamsSetServer, args)})
	case e.Route != nil:
		key, plen, err := dataplane.RouteMatch(e.Prefix)
		if err != nil {
			return nil, err
		}
		name, args := e.Route.Action()
		return cl.TableUpdates(o, p4rtclient.Entry{Table: dataplane.TableRoute,
			Match:  []p4rtclient.Match{p4rtclient.LPM{Field: dataplane.KeyRouteDst, Value: key, PrefixLen: int32(plen)}},
			Action: name, Params: params(dataplane.ParamsRoute, args)})
	case e.Lock != nil:
		name, args := e.Lock.Action()
		en := p4rtclient.Entry{Table: dataplane.TableLock,
			Match: []p4rtclient.Match{p4rtclient.Exact{Field: dataplane.KeyLock, Value: e.Lock.Match()}}}
		if o != p4rtclient.Delete {
			en.Action, en.Params = name, params(dataplane.ParamsLockHit, args)
		}
		return cl.TableUpdates(o, en)
	case e.Tenant != nil:
		name, args := dataplane.TenantAction(e.Tenant.Meter)
		ups, err := cl.TableUpdates(o, p4rtclient.Entry{Table: dataplane.TableTenant,
			Match:  []p4rtclient.Match{p4rtclient.Exact{Field: dataplane.KeyTenant, Value: dataplane.TenantMatch(e.Tenant.ID)}},
			Action: name, Params: params(dataplane.ParamsTenantLimit, args)})
		if err != nil || o == p4rtclient.Delete {
			return ups, err
		}
		rate, burst := int64(e.Tenant.Rate), int64(e.Tenant.Burst)
		ms, err := cl.MeterUpdates(dataplane.MeterTenant, int64(e.Tenant.Meter),
			p4rtclient.Meter{CIR: rate, CBurst: burst, PIR: rate, PBurst: burst})
		if err != nil {
			return nil, err
		}
		return append(ups, ms...), nil
	}
	// The TNA program's answer copies carry the request behind the answer: the session cuts it.
	arch, err := cl.Arch()
	if err != nil {
		return nil, err
	}
	s := p4rtclient.CloneSession{ID: uint32(dataplane.CloneSession(e.ClonePort)),
		Replicas: []p4rtclient.Replica{{Port: uint32(e.ClonePort)}}, PacketLength: int32(dataplane.CloneTruncate(arch))}
	return []p4rtclient.Update{p4rtclient.CloneSessionUpdate(o, s)}, nil
}

// readLocks reads the lock table and its direct counters.
func (c *Controller) readLocks(ctx context.Context, cl *p4rtclient.Client) ([]dataplane.LockEntry, map[uint32]uint64, error) {
	ens, counts, err := cl.ReadEntries(ctx, dataplane.TableLock)
	if err != nil {
		return nil, nil, err
	}
	hits := make(map[uint32]uint64, len(ens))
	out := make([]dataplane.LockEntry, 0, len(ens))
	for i, en := range ens {
		var key []byte
		if len(en.Match) == 1 {
			if m, ok := en.Match[0].(p4rtclient.Exact); ok {
				key = m.Value
			}
		}
		args := make([][]byte, len(en.Params))
		for j, p := range en.Params {
			args[j] = p.Value
		}
		le, err := dataplane.ParseLockEntry(key, en.Action, args)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, le)
		hits[le.Lock] = counts[i]
	}
	return out, hits, nil
}
