package dataplane

// P4Info names of everything the control plane programs or reads in p4/netlock.p4 (full
// control-plane names, as `netlock p4 info p4/netlock.p4` prints them). docs/dataplane.md
// ("Control interface") describes each one.
const (
	// TableRack is keyless; the control plane sets its default action to ActionSetRack.
	TableRack       = "NetlockIngress.rack"
	ActionSetRack   = "NetlockIngress.set_rack"
	ActionRackUnset = "NetlockIngress.rack_unset"

	// TableLock maps a lock id (exact, key KeyLock) to ActionLockHit or ActionLockPause.
	TableLock       = "NetlockIngress.lock_table"
	KeyLock         = "lock"
	ActionLockHit   = "NetlockIngress.lock_hit"
	ActionLockPause = "NetlockIngress.lock_pause"
	ActionLockMiss  = "NetlockIngress.lock_miss"
	// CounterLockHits is TableLock's direct counter (packets per lock entry: r_i).
	CounterLockHits = "NetlockIngress.lock_hits"

	// TableServers maps a server number (exact, key KeyServer) to ActionSetServer.
	TableServers        = "NetlockIngress.lock_servers"
	KeyServer           = "server"
	ActionSetServer     = "NetlockIngress.set_server"
	ActionServerUnknown = "NetlockIngress.server_unknown"

	// TableTenant maps a tenant (exact, key KeyTenant) to ActionTenantLimit(meter index).
	TableTenant       = "NetlockIngress.tenant_quota"
	KeyTenant         = "tenant"
	ActionTenantLimit = "NetlockIngress.tenant_limit"
	// MeterTenant is the indexed packet meter the tenant entries point into.
	MeterTenant = "NetlockIngress.tenant_meter"

	// TableRoute is IPv4 routing (lpm, key KeyRouteDst): ActionRoute or ActionNoRoute.
	TableRoute      = "NetlockIngress.ipv4_lpm"
	KeyRouteDst     = "dst"
	ActionRoute     = "NetlockIngress.route"
	ActionNoRoute   = "NetlockIngress.no_route"
	CounterRouteHit = "NetlockIngress.route_hits"

	// CounterDrops counts the packets the program drops, indexed by Drop*.
	CounterDrops = "NetlockIngress.nl_drops"

	// Registers (read-only for the control plane: admin packets change lock state).
	RegisterCookie = "NetlockIngress.cookie"
	RegisterState  = "NetlockIngress.lk_state"
	RegisterWait   = "NetlockIngress.lk_wait"
	RegisterQueue  = "NetlockIngress.lk_q"
	RegisterToken  = "NetlockIngress.lk_tok"
	RegisterFloor  = "NetlockIngress.lk_floor"
	// RegisterTokenHigh, RegisterFloorHigh and RegisterWaitHigh are the TNA program's high
	// halves of the grant counter, the floor and the waiters (level 1): its RegisterToken,
	// RegisterFloor and RegisterWait hold the low halves (level 0), so that each stateful ALU
	// compares and returns one 32-bit value (docs/dataplane.md "Tofino").
	RegisterTokenHigh = "NetlockIngress.lk_tok_hi"
	RegisterFloorHigh = "NetlockIngress.lk_floor_hi"
	RegisterWaitHigh  = "NetlockIngress.lk_wait_hi"
	// RegisterDone is the TNA program's count of done slots, which p4/netlock.p4 keeps in
	// RegisterQueue's bits 63:48.
	RegisterDone = "NetlockIngress.lk_done"
	// RegisterQueueHigh and RegisterBuffered are the TNA program's occupied slots at level 1 and
	// requests buffered at the server, which p4/netlock.p4 keeps in RegisterQueue's bits 31:16
	// and 47:32: the TNA program's RegisterQueue holds level 0's occupied slots alone, so that
	// each stateful ALU compares one whole value (docs/dataplane.md "Tofino").
	RegisterQueueHigh = "NetlockIngress.lk_q_hi"
	RegisterBuffered  = "NetlockIngress.lk_buf"

	// Controller packet metadata (@controller_header).
	PacketOutHeader = "packet_out"
	PacketInHeader  = "packet_in"
)

// Parameter names of the actions above, in order.
var (
	ParamsSetRack     = []string{"key", "switch_ip", "switch_mac", "default_lease", "max_lease"}
	ParamsLockHit     = []string{"index", "left0", "size0", "left1", "size1", "server"}
	ParamsSetServer   = []string{"ip", "udp_port", "port", "mac"}
	ParamsTenantLimit = []string{"meter_index"}
	ParamsRoute       = []string{"smac", "dmac", "port"}
)

// Drop reasons: indices of CounterDrops.
const (
	DropMalformed    = 0 // UDP to port 8888 without a valid netlock header
	DropChecksum     = 1 // IPv4 header checksum wrong
	DropPushBackKey  = 2 // push-back to the switch without the rack key
	DropAdminPort    = 3 // switch admin packet from a port other than the CPU port
	DropAdminKey     = 4 // switch admin packet without the rack key (or before the rack is set)
	DropPushBackLock = 5 // push-back for a lock that is not in the switch
	DropNoRoute      = 6 // no route for a packet or an answer
	DropTTL          = 7 // TTL expired
	DropReasons      = 8
)

// DropNames names the drop reasons (for metrics labels).
var DropNames = [DropReasons]string{"malformed", "checksum", "pushback-key", "admin-port", "admin-key",
	"pushback-lock", "no-route", "ttl"}

// CloneSession is the clone session the program uses to send an answer out of port: the
// control plane creates session port+1 -> port for every port (answers to hosts and servers
// are ingress-to-egress clones when a pass sends two packets).
func CloneSession(port int) int { return port + 1 }

// TNAAnswerCopyBytes is how much of a mirrored copy the TNA program uses: the mirror header
// (nl_kind_t, 1 byte), the kind of the packet it copies (1) and its answer headers (ans_meta_t,
// ans_eth_t, ans_ip_t, ans_udp_t, ans_nl_t and the rack key: 3 + 12 + 8 + 4 + 47 + 8 = 82 bytes,
// ANS_BITS). The recirculation header and the request that follow are cut off by the clone
// session (CloneTruncate), so they never leave the switch (a server's request carries the rack
// key).
const TNAAnswerCopyBytes = 1 + 1 + 82

// CloneTruncate is the packet_length_bytes of every clone session (CloneSession) of a program
// for architecture arch (P4Info's pkg_info.arch: "v1model", "tna" or "t2na"; Program.Name):
// TNAAnswerCopyBytes for the TNA program, whose answer copies are mirrored with the request
// behind the answer, and 0 (no truncation) for p4/netlock.p4, whose clones carry their answer
// in metadata and are rewritten whole. Tofino counts a truncation from the mirror header
// (max_pkt_len of the session: open-p4studio's bf_mirror_session_info_t), as the engine does;
// if a Tofino counted it after the mirror header, one byte of the recirculation header would
// stay behind the answer, beyond the IPv4 and UDP lengths the egress writes.
func CloneTruncate(arch string) int {
	if arch == TNA.Name || arch == "t2na" {
		return TNAAnswerCopyBytes
	}
	return 0
}

// Levels is the number of priority levels the switch keeps (one queue per level per lock):
// priority 0 is level 0, every other priority level 1 (FIFO among them).
const Levels = 2

// PacketOut kinds (packet_out.kind).
const (
	PacketOutAdmin = 0 // a netlock admin frame follows
	PacketOutRaw   = 1 // send the frame that follows out of packet_out.egress_port
)

// PacketInAdminReply is packet_in.reason of an admin reply.
const PacketInAdminReply = 1

// Admin results (the result byte of an admin reply).
const (
	AdminOK         = 0 // done
	AdminNoLock     = 1 // the lock is not in the switch (TableLock has no entry for it)
	AdminNotHeld    = 2 // force-release: no such grant (token, txn) is held
	AdminBadRequest = 3 // unknown sub-operation or bad argument
)

// TNAQueueParts are the TNA program's registers that hold p4/netlock.p4's RegisterQueue, 16
// bits each, at their bit offsets there: occupied slots at level 0 and 1, requests buffered at
// the server, done slots.
var TNAQueueParts = []struct {
	Register string
	Shift    uint
}{{RegisterQueue, 0}, {RegisterQueueHigh, 16}, {RegisterBuffered, 32}, {RegisterDone, 48}}
