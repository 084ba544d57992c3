package dpengine

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/bmv2/tofino"
	"github.com/netlock-go/netlock/internal/p4info"
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
	// owners: in a program of several Pipelines, the copy of each register that holds its
	// state (RegisterOwners); nil otherwise
	owners map[string]string
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
	if cfg.Pipes == 0 {
		cfg.Pipes = prog.Pipes
	}
	if cfg.Loopback == nil {
		cfg.Loopback = prog.Loopback
	}
	sw, err := engine.Load(checked, cfg)
	if err != nil {
		return nil, fmt.Errorf("dataplane: %w", err)
	}
	out := &Switch{Switch: sw, Sizing: s, Program: prog}
	if pipes, err := checked.TNAPipes(); err == nil && len(pipes) > 1 {
		if out.owners, err = RegisterOwners(checked); err != nil {
			return nil, fmt.Errorf("dataplane: %w", err)
		}
	}
	return out, nil
}

// eachTable calls f with name's table in each Pipeline that has it: the one table of a
// program of one Pipeline; in a program of several (the TNA program's fold: NETLOCK_FOLD),
// the control plane writes every Pipeline's copy, as bf_switchd's pipe scopes have it
// written per pipe (engine: Pipeline objects are named pipe.Control.name).
func (sw *Switch) eachTable(name string, f func(*engine.Table) error) error {
	ts, err := pipelineCopies(sw.Tables(), func(t *engine.Table) string { return t.Name }, name, sw.Table)
	if err != nil {
		return fmt.Errorf("dataplane: %w", err)
	}
	for _, t := range ts {
		if err := f(t); err != nil {
			return err
		}
	}
	return nil
}

// pipelineCopies returns the objects of xs that are name or its copy in a Pipeline
// (p4info.InPipeline), else the one object the engine's lookup (one) finds by name.
func pipelineCopies[T any](xs []T, nameOf func(T) string, name string, one func(string) (T, error)) ([]T, error) {
	var out []T
	for _, x := range xs {
		if p4info.InPipeline(nameOf(x), name) {
			out = append(out, x)
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	x, err := one(name)
	if err != nil {
		return nil, err
	}
	return []T{x}, nil
}

// SetRack sets the rack configuration.
func (sw *Switch) SetRack(r dataplane.Rack) error {
	name, args, err := r.Action()
	if err != nil {
		return err
	}
	return sw.eachTable(dataplane.TableRack, func(t *engine.Table) error { return t.SetDefault(name, 0, args) })
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
	name, args, err := s.Action()
	if err != nil {
		return err
	}
	return sw.eachTable(dataplane.TableServers, func(t *engine.Table) error {
		return upsert(t, engine.Entry{Match: []engine.FieldMatch{{Name: dataplane.KeyServer, Value: dataplane.ServerMatch(id)}},
			Action: name, Args: args})
	})
}

// SetLock writes a lock entry (insert or modify).
func (sw *Switch) SetLock(e dataplane.LockEntry) error {
	if err := e.Validate(sw.Sizing); err != nil {
		return err
	}
	name, args := e.Action()
	return sw.eachTable(dataplane.TableLock, func(t *engine.Table) error {
		return upsert(t, engine.Entry{Match: []engine.FieldMatch{{Name: dataplane.KeyLock, Value: e.Match()}}, Action: name, Args: args})
	})
}

// DeleteLock removes a lock entry.
func (sw *Switch) DeleteLock(lock uint32) error {
	return sw.eachTable(dataplane.TableLock, func(t *engine.Table) error {
		return t.Delete(engine.Entry{Match: []engine.FieldMatch{{Name: dataplane.KeyLock, Value: dataplane.LockEntry{Lock: lock}.Match()}}})
	})
}

// AddRoute writes an IPv4 route and the clone session of its port.
func (sw *Switch) AddRoute(p netip.Prefix, h dataplane.NextHop) error {
	key, plen, err := dataplane.RouteMatch(p)
	if err != nil {
		return err
	}
	name, args := h.Action()
	if err := sw.eachTable(dataplane.TableRoute, func(t *engine.Table) error {
		return upsert(t, engine.Entry{Match: []engine.FieldMatch{{Name: dataplane.KeyRouteDst, Value: key, PrefixLen: plen}},
			Action: name, Args: args})
	}); err != nil {
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
	name, args := dataplane.TenantAction(index)
	if err := sw.eachTable(dataplane.TableTenant, func(t *engine.Table) error {
		return upsert(t, engine.Entry{Match: []engine.FieldMatch{{Name: dataplane.KeyTenant, Value: dataplane.TenantMatch(tenant)}},
			Action: name, Args: args})
	}); err != nil {
		return err
	}
	perMicro := rate / 1e6
	ms, err := pipelineCopies(sw.Meters(), func(m *engine.Meter) string { return m.Name }, dataplane.MeterTenant, sw.Meter)
	if err != nil {
		return fmt.Errorf("dataplane: %w", err)
	}
	for _, m := range ms {
		if err := m.SetRates(index, engine.MeterConfig{CIR: perMicro, PIR: perMicro, CBS: burst, PBS: burst}); err != nil {
			return err
		}
	}
	return nil
}

// Drops returns the drop counter's packets per reason.
func (sw *Switch) Drops() ([dataplane.DropReasons]uint64, error) {
	var out [dataplane.DropReasons]uint64
	ks, err := pipelineCopies(sw.Counters(), func(k *engine.Counter) string { return k.Name }, dataplane.CounterDrops, sw.Counter)
	if err != nil {
		return out, fmt.Errorf("dataplane: %w", err)
	}
	for _, k := range ks { // the packets counted in every Pipeline
		for i := range out {
			n, _, _ := k.Read(i)
			out[i] += n
		}
	}
	return out, nil
}

// Register finds a register array by name or unique suffix. In a program of several Pipelines
// (dataplane.TNAFold) each has a copy of the control's registers under its prefix; the name
// then finds the copy of the Pipeline whose code uses the register (RegisterOwners).
func (sw *Switch) Register(name string) (*engine.Register, error) {
	r, err := sw.Switch.Register(name)
	if err == nil || sw.owners == nil {
		return r, err
	}
	full, ok := sw.owners[name]
	if !ok {
		return nil, err
	}
	return sw.Switch.Register(full)
}

// RegisterOwners maps the control-scoped name of each register of c, a TNA program of several
// Pipelines (NetlockIngress.lk_q), to the engine's name of the copy in the one Pipeline whose
// code uses it (pipe_b.NetlockIngress.lk_q), by the model of the compiler's folding of each
// Pipeline's constructor arguments (tofino.PipelineObjects). A register no Pipeline uses, or
// that several use, has no owner.
func RegisterOwners(c *front.Checked) (map[string]string, error) {
	pipes, err := c.TNAPipes()
	if err != nil {
		return nil, err
	}
	objs, err := tofino.PipelineObjects(c)
	if err != nil {
		return nil, err
	}
	if len(objs) != len(pipes) {
		return nil, fmt.Errorf("dataplane: %d Pipelines, objects of %d", len(pipes), len(objs))
	}
	owners, shared := map[string]string{}, map[string]bool{}
	for i, p := range pipes {
		for g, b := range []front.Block{p.Ingress, p.Egress} {
			for _, r := range objs[i].Registers[g] {
				name := b.Name() + "." + localName(b.Control, r)
				if _, dup := owners[name]; dup {
					shared[name] = true
				}
				owners[name] = p.Name + "." + name
			}
		}
	}
	for name := range shared {
		delete(owners, name)
	}
	return owners, nil
}

// localName is the control-plane name, within its control, of ctl's instance declared as decl:
// its @name annotation's (LEVEL_REGS names its registers levels.level0.tail), else decl.
func localName(ctl *front.ControlDecl, decl string) string {
	for _, l := range ctl.Locals {
		if in, ok := l.(*front.InstanceDecl); ok && in.Name == decl {
			if a := in.Annos.Get("name"); a != nil {
				if s, ok := a.StringArg(); ok {
					return strings.TrimPrefix(s, ".")
				}
			}
		}
	}
	return decl
}
