package dpengine

import (
	"fmt"
	"net/netip"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/p4/dataplane"
)

// Switch is one of the programs (p4/netlock.p4 unless loaded with LoadProgram) loaded into
// the execution engine, with the control interface as methods on the engine's runtime API:
// the harness of the tests, the differential test and the benchmarks. It is not safe for
// concurrent use (the engine is not).
type Switch struct {
	*engine.Switch
	Sizing  dataplane.Sizing
	Program dataplane.Program
}

// Load compiles p4/netlock.p4 with sizes s into a new engine switch. cfg.CPUPort is set from
// s when zero.
func Load(s dataplane.Sizing, cfg engine.Config) (*Switch, error) {
	return load(dataplane.V1Model, s, dataplane.V1Model.Source, cfg)
}

// LoadProgram compiles prog with sizes s into a new engine switch. cfg.CPUPort is set from s
// when zero. The TNA program recirculates through engine.TNARecirculationPort (the engine's
// default loopback port).
func LoadProgram(prog dataplane.Program, s dataplane.Sizing, cfg engine.Config) (*Switch, error) {
	return load(prog, s, prog.Source, cfg)
}

func load(prog dataplane.Program, s dataplane.Sizing, src []byte, cfg engine.Config) (*Switch, error) {
	s = s.WithDefaults()
	checked, err := checkSource(prog, s, src)
	if err != nil {
		return nil, err
	}
	if cfg.CPUPort == 0 {
		cfg.CPUPort = s.CPUPort
	}
	sw, err := engine.Load(checked, cfg)
	if err != nil {
		return nil, fmt.Errorf("dataplane: %w", err)
	}
	return &Switch{Switch: sw, Sizing: s, Program: prog}, nil
}

func (sw *Switch) table(name string) (*engine.Table, error) {
	t, err := sw.Table(name)
	if err != nil {
		return nil, fmt.Errorf("dataplane: %w", err)
	}
	return t, nil
}

// SetRack sets the rack configuration.
func (sw *Switch) SetRack(r dataplane.Rack) error {
	t, err := sw.table(dataplane.TableRack)
	if err != nil {
		return err
	}
	name, args, err := r.Action()
	if err != nil {
		return err
	}
	return t.SetDefault(name, 0, args)
}

// upsert inserts e, or modifies the entry with its key.
func upsert(t *engine.Table, e engine.Entry) error {
	if err := t.Insert(e); err != nil {
		if err2 := t.Modify(e); err2 != nil {
			return fmt.Errorf("dataplane: %s: %w", t.Name, err)
		}
	}
	return nil
}

// SetServer writes server number id.
func (sw *Switch) SetServer(id uint16, s dataplane.Server) error {
	t, err := sw.table(dataplane.TableServers)
	if err != nil {
		return err
	}
	name, args, err := s.Action()
	if err != nil {
		return err
	}
	return upsert(t, engine.Entry{Match: []engine.FieldMatch{{Name: dataplane.KeyServer, Value: dataplane.ServerMatch(id)}},
		Action: name, Args: args})
}

// SetLock writes a lock entry (insert or modify).
func (sw *Switch) SetLock(e dataplane.LockEntry) error {
	if err := e.Validate(sw.Sizing); err != nil {
		return err
	}
	t, err := sw.table(dataplane.TableLock)
	if err != nil {
		return err
	}
	name, args := e.Action()
	return upsert(t, engine.Entry{Match: []engine.FieldMatch{{Name: dataplane.KeyLock, Value: e.Match()}}, Action: name, Args: args})
}

// DeleteLock removes a lock entry.
func (sw *Switch) DeleteLock(lock uint32) error {
	t, err := sw.table(dataplane.TableLock)
	if err != nil {
		return err
	}
	return t.Delete(engine.Entry{Match: []engine.FieldMatch{{Name: dataplane.KeyLock, Value: dataplane.LockEntry{Lock: lock}.Match()}}})
}

// AddRoute writes an IPv4 route and the clone session of its port.
func (sw *Switch) AddRoute(p netip.Prefix, h dataplane.NextHop) error {
	t, err := sw.table(dataplane.TableRoute)
	if err != nil {
		return err
	}
	key, plen, err := dataplane.RouteMatch(p)
	if err != nil {
		return err
	}
	name, args := h.Action()
	if err := upsert(t, engine.Entry{Match: []engine.FieldMatch{{Name: dataplane.KeyRouteDst, Value: key, PrefixLen: plen}},
		Action: name, Args: args}); err != nil {
		return err
	}
	sw.AddPortSession(h.Port)
	return nil
}

// AddPortSession creates the clone session of a port (AddRoute does it for routed ports; a
// server's port needs one too), truncated as the program needs (dataplane.CloneTruncate).
func (sw *Switch) AddPortSession(port int) {
	sw.SetCloneSession(dataplane.CloneSession(port), engine.CloneSession{Port: port, HasPort: true,
		TruncateLen: dataplane.CloneTruncate(sw.Program.Name)})
}

// SetTenantLimit limits tenant by meter cell index, which admits burst acquires and then
// rate per second (a packet meter: committed and peak rate both rate, bursts both burst;
// an acquire that is not green is over quota).
func (sw *Switch) SetTenantLimit(tenant uint16, index int, rate float64, burst uint64) error {
	t, err := sw.table(dataplane.TableTenant)
	if err != nil {
		return err
	}
	name, args := dataplane.TenantAction(index)
	if err := upsert(t, engine.Entry{Match: []engine.FieldMatch{{Name: dataplane.KeyTenant, Value: dataplane.TenantMatch(tenant)}},
		Action: name, Args: args}); err != nil {
		return err
	}
	m, err := sw.Meter(dataplane.MeterTenant)
	if err != nil {
		return fmt.Errorf("dataplane: %w", err)
	}
	perMicro := rate / 1e6
	return m.SetRates(index, engine.MeterConfig{CIR: perMicro, PIR: perMicro, CBS: burst, PBS: burst})
}

// Drops returns the drop counter's packets per reason.
func (sw *Switch) Drops() ([dataplane.DropReasons]uint64, error) {
	var out [dataplane.DropReasons]uint64
	k, err := sw.Counter(dataplane.CounterDrops)
	if err != nil {
		return out, fmt.Errorf("dataplane: %w", err)
	}
	for i := range out {
		out[i], _, _ = k.Read(i)
	}
	return out, nil
}
