package dataplane_test

import (
	"fmt"
	"maps"
	"math/big"
	"slices"
	"sort"
	"strings"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/config/v1"

	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/p4/dataplane/dpengine"
	"github.com/netlock-go/netlock/wire"
)

// TestProgramConstants checks, for each program, that its protocol constants are wire's and
// that the Go names of its tables, actions, parameters, counters and registers exist in its
// P4Info.
func TestProgramConstants(t *testing.T) {
	for _, prog := range dataplane.Programs {
		t.Run(prog.Name, func(t *testing.T) { testProgramConstants(t, prog) })
	}
}

func testProgramConstants(t *testing.T, prog dataplane.Program) {
	checked, err := dpengine.CheckProgram(prog, dataplane.DefaultSizing)
	if err != nil {
		t.Fatal(err)
	}
	constant := func(name string) uint64 {
		t.Helper()
		for _, d := range checked.Globals[name] {
			if c, ok := d.(*front.ConstDecl); ok {
				if v, ok := c.Val.(*big.Int); ok {
					return v.Uint64()
				}
			}
		}
		t.Fatalf("constant %s not found", name)
		return 0
	}
	want := map[string]uint64{
		"NL_PORT": wire.Port, "NL_VERSION": wire.Version,
		"OP_ACQUIRE": uint64(wire.OpAcquire), "OP_RELEASE": uint64(wire.OpRelease), "OP_PUSHBACK": uint64(wire.OpPushBack),
		"OP_GRANT": uint64(wire.OpGrant), "OP_REJECT": uint64(wire.OpReject), "OP_OVERFLOW": uint64(wire.OpOverflow),
		"OP_QEMPTY": uint64(wire.OpQueueEmpty), "OP_PROBE": uint64(wire.OpLeaseProbe), "OP_ADMIN": uint64(wire.OpAdmin),
		"MODE_S": uint64(wire.Shared), "MODE_X": uint64(wire.Exclusive),
		"FL_REPLY": uint64(wire.FlagReply), "FL_RETRY": uint64(wire.FlagRetry), "FL_TRY": uint64(wire.FlagTry),
		"FL_FWD":   uint64(wire.FlagForwarded),
		"ST_QUOTA": uint64(wire.StatusQuota), "ST_WOULDBLOCK": uint64(wire.StatusWouldBlock),
		"ST_NOTHOLDER": uint64(wire.StatusNotHolder), "ST_LEASEEXP": uint64(wire.StatusLeaseExpired),
		"ST_BADREQ": uint64(wire.StatusBadRequest),
		"ADM_PROBE": uint64(wire.AdminSwitchProbe), "ADM_RESET": uint64(wire.AdminSwitchReset),
		"ADM_FORCE": uint64(wire.AdminSwitchForceRelease), "ADM_TOKEN_BASE": uint64(wire.AdminSwitchTokenBase),
		"ADM_GET_COOKIE": uint64(wire.AdminSwitchGetCookie), "ADM_SET_COOKIE": uint64(wire.AdminSwitchSetCookie),
		"ADM_SET_BUFFERED": uint64(wire.AdminSwitchSetBuffered),
		"AR_OK":            dataplane.AdminOK, "AR_NOLOCK": dataplane.AdminNoLock, "AR_NOTHELD": dataplane.AdminNotHeld, "AR_BADREQ": dataplane.AdminBadRequest,
		"DR_MALFORMED": dataplane.DropMalformed, "DR_CHECKSUM": dataplane.DropChecksum, "DR_PUSHBACK_KEY": dataplane.DropPushBackKey,
		"DR_ADMIN_PORT": dataplane.DropAdminPort, "DR_ADMIN_KEY": dataplane.DropAdminKey, "DR_PUSHBACK_LOCK": dataplane.DropPushBackLock,
		"DR_NO_ROUTE": dataplane.DropNoRoute, "DR_TTL": dataplane.DropTTL,
	}
	for name, v := range want {
		if got := constant(name); got != v {
			t.Errorf("%s = %d in p4/%s, %d in Go", name, got, prog.File, v)
		}
	}

	info, err := checked.P4Info()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, x := range info.Tables {
		names[x.Preamble.Name] = true
		for _, m := range x.MatchFields {
			names[x.Preamble.Name+"/"+m.Name] = true
		}
	}
	params := map[string][]string{}
	for _, x := range info.Actions {
		names[x.Preamble.Name] = true
		for _, p := range x.Params {
			params[x.Preamble.Name] = append(params[x.Preamble.Name], p.Name)
		}
	}
	for _, x := range info.Counters {
		names[x.Preamble.Name] = true
	}
	for _, x := range info.DirectCounters {
		names[x.Preamble.Name] = true
	}
	for _, x := range info.Meters {
		names[x.Preamble.Name] = true
	}
	for _, x := range info.Registers {
		names[x.Preamble.Name] = true
	}
	for _, x := range info.ControllerPacketMetadata {
		names[x.Preamble.Name] = true
	}
	for _, n := range []string{dataplane.TableRack, dataplane.ActionSetRack, dataplane.ActionRackUnset, dataplane.TableLock, dataplane.TableLock + "/" + dataplane.KeyLock, dataplane.ActionLockHit,
		dataplane.ActionLockPause, dataplane.ActionLockMiss, dataplane.CounterLockHits, dataplane.TableServers, dataplane.TableServers + "/" + dataplane.KeyServer, dataplane.ActionSetServer,
		dataplane.ActionServerUnknown, dataplane.TableTenant, dataplane.TableTenant + "/" + dataplane.KeyTenant, dataplane.ActionTenantLimit, dataplane.MeterTenant, dataplane.TableRoute,
		dataplane.TableRoute + "/" + dataplane.KeyRouteDst, dataplane.ActionRoute, dataplane.ActionNoRoute, dataplane.CounterRouteHit, dataplane.CounterDrops, dataplane.RegisterCookie,
		dataplane.RegisterState, dataplane.RegisterWait, dataplane.RegisterQueue, dataplane.RegisterToken, dataplane.RegisterFloor, dataplane.PacketOutHeader, dataplane.PacketInHeader} {
		if !names[n] {
			t.Errorf("%s is not in the program's P4Info", n)
		}
	}
	for action, want := range map[string][]string{dataplane.ActionSetRack: dataplane.ParamsSetRack, dataplane.ActionLockHit: dataplane.ParamsLockHit,
		dataplane.ActionLockPause: dataplane.ParamsLockHit, dataplane.ActionSetServer: dataplane.ParamsSetServer, dataplane.ActionTenantLimit: dataplane.ParamsTenantLimit,
		dataplane.ActionRoute: dataplane.ParamsRoute} {
		if got := params[action]; len(got) != len(want) || (len(want) > 0 && !equal(got, want)) {
			t.Errorf("parameters of %s: %v in the program, %v in Go", action, got, want)
		}
	}
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// interfaceLines renders what a controller programs in a P4Info (tables, their actions,
// counters, meters, controller packet metadata) without ids, sorted. A table whose entries are
// const (the program's own decisions, such as the TNA program's pass_type and hold_op) is not
// programmed by a controller: it and the actions only it runs are left out.
func interfaceLines(info *p4v1.P4Info) []string {
	var out []string
	names := map[uint32]string{}
	inTable := map[uint32]bool{} // actions a table can run: the others are the program's helpers
	for _, x := range info.Tables {
		if x.IsConstTable {
			continue
		}
		for _, a := range x.ActionRefs {
			inTable[a.Id] = true
		}
	}
	for _, a := range info.Actions {
		names[a.Preamble.Id] = a.Preamble.Name
		if !inTable[a.Preamble.Id] {
			continue
		}
		var ps []string
		for _, p := range a.Params {
			ps = append(ps, fmt.Sprintf("%s:%d", p.Name, p.Bitwidth))
		}
		out = append(out, fmt.Sprintf("action %s(%s)", a.Preamble.Name, strings.Join(ps, ", ")))
	}
	for _, x := range info.Tables {
		names[x.Preamble.Id] = x.Preamble.Name
	}
	for _, x := range info.Tables {
		if x.IsConstTable {
			continue
		}
		var ks, as []string
		for _, m := range x.MatchFields {
			ks = append(ks, fmt.Sprintf("%s:%d:%s", m.Name, m.Bitwidth, m.GetMatchType()))
		}
		for _, a := range x.ActionRefs {
			as = append(as, names[a.Id])
		}
		sort.Strings(as)
		var direct []string
		for _, id := range x.DirectResourceIds {
			for _, c := range info.DirectCounters {
				if c.Preamble.Id == id {
					direct = append(direct, c.Preamble.Name)
				}
			}
		}
		out = append(out, fmt.Sprintf("table %s key(%s) actions(%s) size %d direct(%s) default %s",
			x.Preamble.Name, strings.Join(ks, ", "), strings.Join(as, ", "), x.Size, strings.Join(direct, ", "),
			names[x.ConstDefaultActionId]))
	}
	for _, c := range info.Counters {
		out = append(out, fmt.Sprintf("counter %s %s size %d", c.Preamble.Name, c.Spec.GetUnit(), c.Size))
	}
	for _, c := range info.DirectCounters {
		out = append(out, fmt.Sprintf("direct_counter %s %s table %s", c.Preamble.Name, c.Spec.GetUnit(), names[c.DirectTableId]))
	}
	for _, m := range info.Meters {
		out = append(out, fmt.Sprintf("meter %s %s size %d", m.Preamble.Name, m.Spec.GetUnit(), m.Size))
	}
	for _, c := range info.ControllerPacketMetadata {
		var fs []string
		for _, m := range c.Metadata {
			fs = append(fs, fmt.Sprintf("%s:%d", m.Name, m.Bitwidth))
		}
		out = append(out, fmt.Sprintf("packet_metadata %s(%s)", c.Preamble.Name, strings.Join(fs, ", ")))
	}
	sort.Strings(out)
	return out
}

// registerLines renders the registers of a P4Info: name, size and cell type.
func registerLines(info *p4v1.P4Info) map[string]string {
	out := map[string]string{}
	for _, r := range info.Registers {
		t := ""
		if b := r.TypeSpec.GetBitstring(); b != nil {
			t = fmt.Sprintf("bit<%d>", b.GetBit().GetBitwidth())
		} else if s := r.TypeSpec.GetStruct(); s != nil {
			t = "struct " + s.GetName()
		}
		out[r.Preamble.Name] = fmt.Sprintf("%s size %d", t, r.Size)
	}
	return out
}

// TestProgramsControlInterface: the controller drives both programs alike. Their P4Info has
// the same tables (keys, actions, sizes, direct counters), actions (parameters), counters,
// meters and controller packet metadata, by name (ids differ: TNA ids hash the pipe's name);
// the registers (read-only for the control plane) differ as docs/dataplane.md says: the TNA
// program's 64-bit cells are pairs of 32-bit halves or two 32-bit registers (the grant counter,
// the floor, the waiters), its queue counters four registers (RegisterQueue, RegisterQueueHigh,
// RegisterBuffered, RegisterDone), and its slot pool is split into 32-bit registers.
func TestProgramsControlInterface(t *testing.T) {
	infos := map[string]*p4v1.P4Info{}
	for _, prog := range dataplane.Programs {
		checked, err := dpengine.CheckProgram(prog, dataplane.DefaultSizing)
		if err != nil {
			t.Fatal(err)
		}
		if infos[prog.Name], err = checked.P4Info(); err != nil {
			t.Fatal(err)
		}
	}
	v1, tna := interfaceLines(infos[dataplane.V1Model.Name]), interfaceLines(infos[dataplane.TNA.Name])
	if len(v1) < 20 {
		t.Fatalf("only %d control-interface entries: %v", len(v1), v1)
	}
	if !slices.Equal(v1, tna) {
		for _, l := range v1 {
			if !slices.Contains(tna, l) {
				t.Errorf("only in the v1model program: %s", l)
			}
		}
		for _, l := range tna {
			if !slices.Contains(v1, l) {
				t.Errorf("only in the TNA program: %s", l)
			}
		}
	}
	rv, rt := registerLines(infos[dataplane.V1Model.Name]), registerLines(infos[dataplane.TNA.Name])
	const locks = "size 16384"
	wantTNA := map[string]string{
		dataplane.RegisterCookie: "struct pair32_t size 1", dataplane.RegisterState: "struct pair32_t " + locks,
		dataplane.RegisterWait: "bit<32> " + locks, dataplane.RegisterWaitHigh: "bit<32> " + locks, dataplane.RegisterQueue: "bit<32> " + locks,
		dataplane.RegisterQueueHigh: "bit<32> " + locks, dataplane.RegisterBuffered: "bit<32> " + locks,
		dataplane.RegisterFloor: "bit<32> " + locks, dataplane.RegisterFloorHigh: "bit<32> " + locks, dataplane.RegisterToken: "bit<32> " + locks,
		dataplane.RegisterTokenHigh: "bit<32> " + locks, dataplane.RegisterDone: "bit<16> " + locks,
		"NetlockIngress.ended": "bit<32> size 65536",
	}
	wantV1 := map[string]string{
		dataplane.RegisterCookie: "bit<64> size 1", dataplane.RegisterState: "bit<64> " + locks, dataplane.RegisterWait: "bit<64> " + locks,
		dataplane.RegisterQueue: "bit<64> " + locks, dataplane.RegisterFloor: "bit<64> " + locks, dataplane.RegisterToken: "bit<64> " + locks,
		"NetlockIngress.ended": "bit<32> size 65536",
	}
	for l := 0; l < dataplane.Levels; l++ {
		for _, f := range []string{"head", "tail", "gnext"} {
			n := fmt.Sprintf("NetlockIngress.levels.level%d.%s", l, f)
			wantTNA[n], wantV1[n] = "bit<16> "+locks, "bit<16> "+locks
		}
	}
	for p := 0; p < dataplane.Parts; p++ {
		for _, f := range []string{"s_txn", "s_flags", "s_who", "s_ts", "s_hold"} {
			wantV1[fmt.Sprintf("NetlockIngress.pool.part%d.%s", p, f)] = "bit<64> size 32768"
		}
	}
	// The TNA program's pool is one array per field over all the slots (docs/dataplane.md,
	// "SRAM for the slot pool").
	const slots = "size 131072"
	for _, f := range []string{"s_txn_hi", "s_txn_lo", "s_hold", "s_gtime", "s_flags", "s_lease", "s_ip", "s_ts_hi", "s_ts_lo"} {
		wantTNA["NetlockIngress.pool."+f] = "bit<32> " + slots
	}
	for _, f := range []string{"s_port", "s_tenant"} {
		wantTNA["NetlockIngress.pool."+f] = "bit<16> " + slots
	}
	for name, regs := range map[string][2]map[string]string{dataplane.V1Model.Name: {rv, wantV1}, dataplane.TNA.Name: {rt, wantTNA}} {
		if !maps.Equal(regs[0], regs[1]) {
			t.Errorf("%s registers:\n got %v\nwant %v", name, regs[0], regs[1])
		}
	}
}
