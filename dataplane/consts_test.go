package dataplane

import (
	"math/big"
	"testing"

	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/wire"
)

// TestProgramConstants checks that the program's protocol constants are wire's and that the
// Go names of its tables, actions, parameters, counters and registers exist in its P4Info.
func TestProgramConstants(t *testing.T) {
	checked, err := DefaultSizing.Load()
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
		"AR_OK":            AdminOK, "AR_NOLOCK": AdminNoLock, "AR_NOTHELD": AdminNotHeld, "AR_BADREQ": AdminBadRequest,
		"DR_MALFORMED": DropMalformed, "DR_CHECKSUM": DropChecksum, "DR_PUSHBACK_KEY": DropPushBackKey,
		"DR_ADMIN_PORT": DropAdminPort, "DR_ADMIN_KEY": DropAdminKey, "DR_PUSHBACK_LOCK": DropPushBackLock,
		"DR_NO_ROUTE": DropNoRoute, "DR_TTL": DropTTL,
	}
	for name, v := range want {
		if got := constant(name); got != v {
			t.Errorf("%s = %d in p4/netlock.p4, %d in Go", name, got, v)
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
	for _, n := range []string{TableRack, ActionSetRack, ActionRackUnset, TableLock, TableLock + "/" + KeyLock, ActionLockHit,
		ActionLockPause, ActionLockMiss, CounterLockHits, TableServers, TableServers + "/" + KeyServer, ActionSetServer,
		ActionServerUnknown, TableTenant, TableTenant + "/" + KeyTenant, ActionTenantLimit, MeterTenant, TableRoute,
		TableRoute + "/" + KeyRouteDst, ActionRoute, ActionNoRoute, CounterRouteHit, CounterDrops, RegisterCookie,
		RegisterState, RegisterWait, RegisterQueue, RegisterToken, RegisterFloor, PacketOutHeader, PacketInHeader} {
		if !names[n] {
			t.Errorf("%s is not in the program's P4Info", n)
		}
	}
	for action, want := range map[string][]string{ActionSetRack: ParamsSetRack, ActionLockHit: ParamsLockHit,
		ActionLockPause: ParamsLockHit, ActionSetServer: ParamsSetServer, ActionTenantLimit: ParamsTenantLimit,
		ActionRoute: ParamsRoute} {
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
