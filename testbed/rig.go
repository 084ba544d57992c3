package testbed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/lockserver"
	"github.com/netlock-go/netlock/testbed/softrack"
)

// rig is what the phases run on: the lock servers (to read their counters), the client nodes
// (each with the tracker of its grants' sources, nil without a switch), a way to make the crash
// phase's client, and the controller's counters if there is one.
type rig struct {
	addrs    []string
	servers  func() []*lockserver.Server
	clients  []*client.Client
	trackers []*sourceTracker
	// crashClient makes a client node that asks for lease.
	crashClient func(lease time.Duration) (*client.Client, error)
	// controller returns the primary controller's counters and locks in the switch (ok false
	// while no controller is primary); nil without a controller.
	controller func() (ctlcore.Stats, bool)
	// switchLocks returns the locks in the switch now (the primary controller's view); nil
	// without a controller.
	switchLocks func() []uint32
	// pipeline names what runs p4/netlock.p4 in the switch (softrack.Rack.SwitchPipeline); "" on
	// loopback.
	pipeline string
	close    func() error
}

// clientRequestTimeout bounds each request of the demo's clients.
const clientRequestTimeout = 2 * time.Second

// startLoopback starts cfg.Servers lock servers and cfg.Clients clients on loopback UDP.
func startLoopback(cfg *Config) (*rig, error) {
	srvCtx, stopServers := context.WithCancel(context.Background())
	var srvWG sync.WaitGroup
	rg := &rig{}
	var servers []*lockserver.Server
	rg.close = func() error {
		for _, c := range rg.clients {
			c.Close()
		}
		stopServers()
		srvWG.Wait()
		return nil
	}
	fail := func(err error) (*rig, error) {
		rg.close()
		return nil, err
	}
	for i := 0; i < cfg.Servers; i++ {
		s, err := lockserver.New(lockserver.Config{Listen: "127.0.0.1:0", Shards: 1,
			Core:   lockcore.Config{DefaultLease: cfg.Lease, MaxLease: 2 * cfg.Lease, Quotas: serverQuotas(cfg)},
			Logger: cfg.Logger.With("server", i+1)})
		if err != nil {
			return fail(err)
		}
		servers = append(servers, s)
		rg.addrs = append(rg.addrs, s.Addr().String())
		srvWG.Add(1)
		go func() {
			defer srvWG.Done()
			if err := s.Run(srvCtx); err != nil {
				cfg.Logger.Error("lock server", "err", err)
			}
		}()
	}
	rg.servers = func() []*lockserver.Server { return servers }
	for i := 0; i < cfg.Clients; i++ {
		c, err := client.New(client.Config{Servers: rg.addrs, Local: "127.0.0.1:0", Lease: cfg.Lease,
			ClientID: uint32(i + 1), RequestTimeout: clientRequestTimeout})
		if err != nil {
			return fail(err)
		}
		rg.clients = append(rg.clients, c)
		rg.trackers = append(rg.trackers, nil)
	}
	rg.crashClient = func(lease time.Duration) (*client.Client, error) {
		return client.New(client.Config{Servers: rg.addrs, Local: "127.0.0.1:0", Lease: lease, ClientID: 0xdead})
	}
	return rg, nil
}

// startRack starts the rack (package testbed/softrack): the switch running p4/netlock.p4, the
// controller over P4Runtime, cfg.Servers lock servers, and cfg.Clients client nodes on switch
// ports 1..Clients; port Clients+1 is the crash phase's client node.
func startRack(ctx context.Context, cfg *Config) (*rig, error) {
	sent := newServerSent()
	r, err := softrack.Start(ctx, softrack.Config{Servers: cfg.Servers, Clients: cfg.Clients + 1, UDP: cfg.UDPPorts, Pipeline: cfg.Pipeline, Generated: cfg.Generated,
		Lease: cfg.Lease, MaxLease: 2 * cfg.Lease, Log: cfg.Logger, WrapServer: sent.wrap, Quotas: serverQuotas(cfg),
		Controller: ctlcore.Config{AllocPeriod: cfg.AllocPeriod, Slots: cfg.Slots, MinRate: cfg.MinRate,
			Tenants: switchQuotas(cfg), TestingKnobs: ctlcore.TestingKnobs{Mutation: cfg.Mutation}}})
	if err != nil {
		return nil, fmt.Errorf("start the rack: %w", err)
	}
	rg := &rig{addrs: r.ServerAddrs(), servers: r.Servers, pipeline: r.SwitchPipeline()}
	rg.close = func() error {
		for _, c := range rg.clients {
			c.Close()
		}
		return r.Close()
	}
	for i := 1; i <= cfg.Clients; i++ {
		tr := newSourceTracker(sent)
		c, err := r.NewClient(i, client.Config{Lease: cfg.Lease, ClientID: uint32(i),
			RequestTimeout: clientRequestTimeout, WrapConn: tr.wrap})
		if err != nil {
			return nil, errors.Join(err, rg.close())
		}
		rg.clients = append(rg.clients, c)
		rg.trackers = append(rg.trackers, tr)
	}
	crashHost := cfg.Clients + 1
	rg.crashClient = func(lease time.Duration) (*client.Client, error) {
		return r.NewClient(crashHost, client.Config{Lease: lease, ClientID: 0xdead})
	}
	rg.controller = func() (ctlcore.Stats, bool) {
		if p := r.Primary(); p != nil {
			return p.Snapshot().Stats, true
		}
		return ctlcore.Stats{}, false
	}
	rg.switchLocks = func() []uint32 {
		if p := r.Primary(); p != nil {
			return p.Snapshot().Locks
		}
		return nil
	}
	return rg, nil
}

// quotaTenants are PhaseQuota's tenants (parsePhase), limited to Config.TenantRate acquires per
// second each.
var quotaTenants = [...]uint16{3, 4}

// serverQuotas returns each server's quotas of quotaTenants: an equal part of the rate (a lock
// lives on one server, and locks are spread evenly over them).
func serverQuotas(cfg *Config) map[uint16]lockcore.Quota {
	q := make(map[uint16]lockcore.Quota)
	for _, t := range quotaTenants {
		q[t] = lockcore.Quota{MaxRate: max(1, cfg.TenantRate/cfg.Servers)}
	}
	return q
}

// switchQuotas returns the switch's meters of quotaTenants (meter i for the i-th): the rate in
// acquires per second, a tenth of a second of it as the burst.
func switchQuotas(cfg *Config) []ctlcore.Tenant {
	var ts []ctlcore.Tenant
	for i, t := range quotaTenants {
		ts = append(ts, ctlcore.Tenant{ID: t, Meter: i, Rate: float64(cfg.TenantRate), Burst: uint64(max(1, cfg.TenantRate/10))})
	}
	return ts
}
