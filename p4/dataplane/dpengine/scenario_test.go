package dpengine

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/bmv2/stf"
	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// The data plane's STF scenarios: p4/testdata/*.stf are p4c Simple Test Framework files (run
// them with `netlock p4 stf --tofino p4/netlock.p4 p4/testdata/NAME.stf`, or with p4c's
// bmv2stf.py against simple_switch, which reads the same commands except register_read's
// expected value). Frames in hex are unreadable, so each is generated from a scenario in
// p4/testdata/scenarios/NAME.scn, which the STF file quotes line by line in comments:
//
//	go test ./p4/dataplane/dpengine -run TestScenarios -update   # regenerate, then review git diff
//
// The expected packets are encoded from the fields the scenario writes down (with this
// package's and wire's encoders, not with the program), so a scenario is a hand-written
// expectation. Scenario lines (fields are name=value; addresses name a host or server):
//
//	rack key=K switch=IP mac=MAC lease=DUR max=DUR      the rack configuration
//	server N ADDR:PORT port=P mac=MAC                    lock server N on switch port P
//	host NAME ADDR:PORT port=P mac=MAC                   a host (route /32 and clone session)
//	lock ID index=I regions=L0+S0,L1+S1 server=N [paused] [unchecked]
//	                                                     unchecked: as written, even what LockEntry.Validate
//	                                                     refuses (a level of 0 slots: a table write can do it)
//	tenant T meter=M burst=B                             a tenant limited to B acquires (no refill)
//	send SRC DST OP FIELDS...                            a datagram from SRC to DST's address (hosts, servers)
//	send-server SERVER OP FIELDS... [key=K]              a control message to the switch (rack key by default)
//	send-raw PORT HEX                                    any frame
//	expect HOST from=SERVER OP FIELDS...                 an answer the switch makes, to HOST from SERVER's address
//	expect-server SERVER OP FIELDS...                    a control message to SERVER (with the rack key)
//	expect-routed SRC DST OP FIELDS...                   send's datagram routed out of DST's port
//	admin OP FIELDS... [key=K] [port=P]                  an admin PacketOut (port 255: the CPU port)
//	expect-admin OP id=N FIELDS...                       the PacketIn answering request N; body fields not given are not checked
//	drops REASON N                                       the nl_drops counter
//	register NAME INDEX VALUE                            a register cell
//
// Netlock fields: lock txn mode(S|X) flags(a|b, names as wire's) status prio tenant
// token(SEQ@SLOT or a number) ts lease(µs) client(HOST or ADDR:PORT) slots.

var updateFlag = flag.Bool("update", false, "rewrite p4/testdata/*.stf from the scenarios")

const scenarioDir = "../../testdata"

// scenario is the state of one generator run.
type scenario struct {
	file     string
	line     int
	sizing   dataplane.Sizing
	key      uint64
	swIP     netip.Addr
	swMAC    dataplane.MAC
	hosts    map[string]endpoint
	servers  map[string]endpoint
	out      strings.Builder
	sessions map[int]bool
	admins   map[uint16]*dataplane.AdminRequest // by id, for expect-admin
}

type endpoint struct {
	addr netip.AddrPort
	port int
	mac  dataplane.MAC
}

func (s *scenario) errf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", s.file, s.line, fmt.Sprintf(format, args...))
}

func parseMAC(v string) (dataplane.MAC, error) {
	var m dataplane.MAC
	parts := strings.Split(v, ":")
	if len(parts) != 6 {
		return m, fmt.Errorf("bad MAC %q", v)
	}
	for i, p := range parts {
		x, err := strconv.ParseUint(p, 16, 8)
		if err != nil {
			return m, fmt.Errorf("bad MAC %q", v)
		}
		m[i] = byte(x)
	}
	return m, nil
}

func hexOf(b []byte) string { return strings.ToUpper(hex.EncodeToString(b)) }

// kv splits name=value words; bare words map to "".
func kv(words []string) map[string]string {
	m := map[string]string{}
	for _, w := range words {
		k, v, _ := strings.Cut(w, "=")
		m[k] = v
	}
	return m
}

func (s *scenario) num(v string) (uint64, error) {
	if a, b, ok := strings.Cut(v, "@"); ok {
		seq, err := strconv.ParseUint(a, 0, 64)
		if err != nil {
			return 0, err
		}
		slot, err := strconv.ParseUint(b, 0, 32)
		if err != nil {
			return 0, err
		}
		return s.sizing.Token(seq, uint32(slot)), nil
	}
	return strconv.ParseUint(v, 0, 64)
}

func (s *scenario) addr(v string) (netip.AddrPort, error) {
	if e, ok := s.hosts[v]; ok {
		return e.addr, nil
	}
	if e, ok := s.servers[v]; ok {
		return e.addr, nil
	}
	return netip.ParseAddrPort(v)
}

// fields reads an op and its fields.
func (s *scenario) fields(op string, words map[string]string) (wire.Fields, error) {
	var f wire.Fields
	found := false
	for o := wire.Op(0); o.Valid(); o++ {
		if o.String() == op {
			f.Op, found = o, true
		}
	}
	if !found {
		return f, s.errf("unknown op %q", op)
	}
	for k, v := range words {
		var err error
		var n uint64
		switch k {
		case "mode":
			switch v {
			case "S":
				f.Mode = wire.Shared
			case "X":
				f.Mode = wire.Exclusive
			default:
				return f, s.errf("mode %q", v)
			}
		case "flags":
			for _, name := range strings.Split(v, "|") {
				ok := false
				for i := 0; i < 6; i++ { // reply ... batch (wire.Flags)
					if wire.Flags(1<<i).String() == name {
						f.Flags |= wire.Flags(1 << i)
						ok = true
					}
				}
				if !ok {
					return f, s.errf("flag %q", name)
				}
			}
		case "status":
			ok := false
			for st := wire.Status(0); st < 9; st++ {
				if st.String() == v {
					f.Status, ok = st, true
				}
			}
			if !ok {
				return f, s.errf("status %q", v)
			}
		case "client":
			if f.Client, err = s.addr(v); err != nil {
				return f, s.errf("client %q: %v", v, err)
			}
		case "lock", "txn", "token", "ts", "lease", "prio", "tenant", "slots":
			if n, err = s.num(v); err != nil {
				return f, s.errf("%s=%q: %v", k, v, err)
			}
			switch k {
			case "lock":
				f.Lock = uint32(n)
			case "txn":
				f.Txn = n
			case "token":
				f.Token = n
			case "ts":
				f.Timestamp = n
			case "lease":
				f.LeaseMicros = uint32(n)
			case "prio":
				f.Priority = uint8(n)
			case "tenant":
				f.Tenant = uint16(n)
			case "slots":
				f.Slots = uint16(n)
			}
		case "key", "from", "port", "paused":
		default:
			return f, s.errf("unknown field %q", k)
		}
	}
	return f, nil
}

func (s *scenario) emit(format string, args ...any) {
	fmt.Fprintf(&s.out, format+"\n", args...)
}

func (s *scenario) session(port int) {
	if !s.sessions[port] {
		s.sessions[port] = true
		s.emit("mirroring_add %d %d", dataplane.CloneSession(port), port)
	}
}

func (s *scenario) endpoint(words []string) (endpoint, error) {
	var e endpoint
	if len(words) < 2 {
		return e, s.errf("need NAME ADDR:PORT port=P mac=MAC")
	}
	a, err := netip.ParseAddrPort(words[1])
	if err != nil {
		return e, s.errf("%v", err)
	}
	m := kv(words[2:])
	p, err := strconv.Atoi(m["port"])
	if err != nil {
		return e, s.errf("port: %v", err)
	}
	mac, err := parseMAC(m["mac"])
	if err != nil {
		return e, s.errf("%v", err)
	}
	return endpoint{addr: a, port: p, mac: mac}, nil
}

func (s *scenario) endpointOf(name string) (endpoint, error) {
	if e, ok := s.hosts[name]; ok {
		return e, nil
	}
	if e, ok := s.servers[name]; ok {
		return e, nil
	}
	return endpoint{}, s.errf("unknown host or server %q", name)
}

func (s *scenario) payload(f *wire.Fields, key string) ([]byte, error) {
	b := wire.Append(nil, f)
	if f.Op.IsControl() {
		k := s.key
		if key != "" {
			var err error
			if k, err = strconv.ParseUint(key, 0, 64); err != nil {
				return nil, s.errf("key: %v", err)
			}
		}
		b = append(b, make([]byte, wire.AuthLen)...)
		wire.SetRackKey(b, k)
	}
	return b, nil
}

// adminExpect renders an admin reply with '*' for the nibbles it does not check.
func (s *scenario) adminExpect(words map[string]string, req *dataplane.AdminRequest) (string, error) {
	frame := req.Frame(nil, s.key)
	var f udpframe.Frame
	if err := udpframe.Parse(frame, &f); err != nil {
		return "", err
	}
	h := wire.Header(f.Payload)
	h.SetFlags(h.Flags() | wire.FlagReply)
	body := f.Payload[wire.ControlLen:]
	care := make([]bool, len(frame))
	for i := 0; i < udpframe.HeaderLen+wire.ControlLen; i++ {
		care[i] = true
	}
	bodyOff := udpframe.HeaderLen + wire.ControlLen
	set := func(off, n int, v uint64) {
		for i := 0; i < n; i++ {
			body[off+i] = byte(v >> (8 * (n - 1 - i)))
			care[bodyOff+off+i] = true
		}
	}
	// The request's level, offset and value stay unless the reply rewrites them.
	care[bodyOff+dataplane.AdminBodyLevel], care[bodyOff+dataplane.AdminBodyOffset], care[bodyOff+dataplane.AdminBodyOffset+1] = true, true, true
	body[dataplane.AdminBodyResult], care[bodyOff+dataplane.AdminBodyResult] = 0, true
	nlOff := udpframe.HeaderLen
	slotField := map[string][2]int{"txn": {12, 8}, "token": {20, 8}, "mode": {2, 1}, "prio": {5, 1}, "tenant": {6, 2},
		"ts": {28, 8}, "lease": {36, 4}}
	if req.Op == wire.AdminSwitchProbe {
		// The probe replaces these header fields with the slot's; checked only when given.
		for _, r := range slotField {
			for i := 0; i < r[1]; i++ {
				care[nlOff+r[0]+i] = false
			}
		}
		for i := 40; i < 46; i++ {
			care[nlOff+i] = false
		}
		care[nlOff+3] = false // flags: reply, and fwd for a pushed-back slot
	}
	bodyField := map[string][2]int{"result": {dataplane.AdminBodyResult, 1}, "value": {dataplane.AdminBodyValue, 8}, "holders": {dataplane.AdminBodyHolders, 2},
		"xheld": {dataplane.AdminBodyXHeld, 1}, "state": {dataplane.AdminBodyState, 1}, "xwait0": {dataplane.AdminBodyXWait0, 2}, "xwait": {dataplane.AdminBodyXWait, 2},
		"wait0": {dataplane.AdminBodyWait0, 2}, "wait1": {dataplane.AdminBodyWait1, 2}, "used0": {dataplane.AdminBodyUsed0, 2}, "used1": {dataplane.AdminBodyUsed1, 2},
		"buffered": {dataplane.AdminBodyBuffered, 2}, "done": {dataplane.AdminBodyDone, 2}, "head": {dataplane.AdminBodyHead, 2}, "tail": {dataplane.AdminBodyTail, 2},
		"gnext": {dataplane.AdminBodyGNext, 2}, "size": {dataplane.AdminBodySize, 2}, "slot": {dataplane.AdminBodySlot, 4}}
	for k, v := range words {
		if r, ok := bodyField[k]; ok {
			n, err := s.num(v)
			if err != nil {
				return "", s.errf("%s: %v", k, err)
			}
			set(r[0], r[1], n)
			continue
		}
		if r, ok := slotField[k]; ok {
			var n uint64
			var err error
			if k == "mode" {
				n = map[string]uint64{"S": 0, "X": 1}[v]
			} else if n, err = s.num(v); err != nil {
				return "", s.errf("%s: %v", k, err)
			}
			for i := 0; i < r[1]; i++ {
				f.Payload[r[0]+i] = byte(n >> (8 * (r[1] - 1 - i)))
				care[nlOff+r[0]+i] = true
			}
			continue
		}
		switch k {
		case "client":
			a, err := s.addr(v)
			if err != nil {
				return "", s.errf("client: %v", err)
			}
			h.SetClientAddr(a)
			for i := 40; i < 46; i++ {
				care[nlOff+i] = true
			}
		case "fwd":
			if v == "1" {
				h.SetFlags(h.Flags() | wire.FlagForwarded)
			}
			care[nlOff+3] = true
		case "id":
		default:
			return "", s.errf("unknown admin reply field %q", k)
		}
	}
	if req.Op == wire.AdminSwitchProbe {
		if _, ok := words["fwd"]; !ok {
			care[nlOff+3] = false
		}
	}
	// The IPv4 header checksum is recomputed by the switch over unchanged fields: the same.
	var b strings.Builder
	b.WriteString(hexOf([]byte{byte(s.sizing.CPUPort >> 1), byte(s.sizing.CPUPort<<7) | dataplane.PacketInAdminReply}))
	b.WriteByte(' ')
	for i, x := range frame {
		if care[i] {
			b.WriteString(hexOf([]byte{x}))
		} else {
			b.WriteString("**")
		}
	}
	b.WriteString("$")
	return b.String(), nil
}

func (s *scenario) adminRequest(words []string) (*dataplane.AdminRequest, map[string]string, error) {
	if len(words) < 1 {
		return nil, nil, s.errf("admin needs an op")
	}
	ops := map[string]wire.Status{"probe": wire.AdminSwitchProbe, "reset": wire.AdminSwitchReset,
		"force-release": wire.AdminSwitchForceRelease, "token-base": wire.AdminSwitchTokenBase,
		"get-cookie": wire.AdminSwitchGetCookie, "set-cookie": wire.AdminSwitchSetCookie,
		"set-buffered": wire.AdminSwitchSetBuffered, "bogus": 31}
	op, ok := ops[words[0]]
	if !ok {
		return nil, nil, s.errf("unknown admin op %q", words[0])
	}
	m := kv(words[1:])
	r := &dataplane.AdminRequest{Op: op}
	get := func(k string) (uint64, error) {
		if v, ok := m[k]; ok {
			return s.num(v)
		}
		return 0, nil
	}
	for _, k := range []string{"id", "lock", "level", "offset", "value", "txn", "token"} {
		n, err := get(k)
		if err != nil {
			return nil, nil, s.errf("%s: %v", k, err)
		}
		switch k {
		case "id":
			r.ID = uint16(n)
		case "lock":
			r.Lock = uint32(n)
		case "level":
			r.Level = uint8(n)
		case "offset":
			r.Offset = uint16(n)
		case "value":
			r.Value = n
		case "txn":
			r.Txn = n
		case "token":
			r.Token = n
		}
	}
	return r, m, nil
}

// translate turns one scenario line into STF commands.
func (s *scenario) translate(line string) error {
	words := strings.Fields(line)
	if len(words) == 0 {
		return nil
	}
	cmd, args := words[0], words[1:]
	m := kv(args)
	switch cmd {
	case "rack":
		k, err := strconv.ParseUint(m["key"], 0, 64)
		if err != nil {
			return s.errf("key: %v", err)
		}
		ip, mac, _ := strings.Cut(m["switch"], "/")
		if s.swIP, err = netip.ParseAddr(ip); err != nil {
			return s.errf("switch: %v", err)
		}
		if s.swMAC, err = parseMAC(mac); err != nil {
			return s.errf("%v", err)
		}
		lease, err1 := time.ParseDuration(m["lease"])
		max, err2 := time.ParseDuration(m["max"])
		if err1 != nil || err2 != nil {
			return s.errf("lease/max: bad duration")
		}
		s.key = k
		name, a, err := dataplane.Rack{Key: k, SwitchIP: s.swIP, SwitchMAC: s.swMAC, DefaultLease: lease, MaxLease: max}.Action()
		if err != nil {
			return s.errf("%v", err)
		}
		s.emit("setdefault %s %s", dataplane.TableRack, call(name, dataplane.ParamsSetRack, a))
	case "server", "host":
		e, err := s.endpoint(args)
		if err != nil {
			return err
		}
		s.session(e.port)
		if cmd == "server" {
			n, err := strconv.Atoi(args[0])
			if err != nil {
				return s.errf("server number: %v", err)
			}
			s.servers["s"+args[0]] = e
			name, a, err := dataplane.Server{Addr: e.addr, Port: e.port, MAC: e.mac}.Action()
			if err != nil {
				return s.errf("%v", err)
			}
			s.emit("add %s %s:%d %s", dataplane.TableServers, dataplane.KeyServer, n, call(name, dataplane.ParamsSetServer, a))
		} else {
			s.hosts[args[0]] = e
		}
		name, a := dataplane.NextHop{SrcMAC: s.swMAC, DstMAC: e.mac, Port: e.port}.Action()
		ip := e.addr.Addr().As4()
		s.emit("add %s %s:0x%s/32 %s", dataplane.TableRoute, dataplane.KeyRouteDst, hex.EncodeToString(ip[:]), call(name, dataplane.ParamsRoute, a))
	case "lock":
		if len(args) < 1 {
			return s.errf("lock ID ...")
		}
		id, err := strconv.ParseUint(args[0], 0, 32)
		if err != nil {
			return s.errf("lock id: %v", err)
		}
		e := dataplane.LockEntry{Lock: uint32(id), Paused: m["paused"] == "" && strings.Contains(line, " paused")}
		idx, err := strconv.ParseUint(m["index"], 0, 32)
		if err != nil {
			return s.errf("index: %v", err)
		}
		srv, err := strconv.ParseUint(m["server"], 0, 16)
		if err != nil {
			return s.errf("server: %v", err)
		}
		e.Index, e.Server = uint32(idx), uint16(srv)
		regs := strings.Split(m["regions"], ",")
		if len(regs) != dataplane.Levels {
			return s.errf("regions: want %d", dataplane.Levels)
		}
		for i, r := range regs {
			a, b, _ := strings.Cut(r, "+")
			l, err1 := strconv.ParseUint(a, 0, 32)
			z, err2 := strconv.ParseUint(b, 0, 16)
			if err1 != nil || err2 != nil {
				return s.errf("region %q", r)
			}
			e.Regions[i] = dataplane.Region{Left: uint32(l), Size: uint16(z)}
		}
		if _, unchecked := m["unchecked"]; !unchecked {
			if err := e.Validate(s.sizing); err != nil {
				return s.errf("%v", err)
			}
		}
		name, a := e.Action()
		s.emit("add %s %s:%d %s", dataplane.TableLock, dataplane.KeyLock, e.Lock, call(name, dataplane.ParamsLockHit, a))
	case "tenant":
		t, err1 := strconv.ParseUint(args[0], 0, 16)
		meter, err2 := strconv.ParseUint(m["meter"], 0, 32)
		burst, err3 := strconv.ParseUint(m["burst"], 0, 32)
		if err1 != nil || err2 != nil || err3 != nil {
			return s.errf("tenant T meter=M burst=B")
		}
		name, a := dataplane.TenantAction(int(meter))
		s.emit("add %s %s:%d %s", dataplane.TableTenant, dataplane.KeyTenant, t, call(name, dataplane.ParamsTenantLimit, a))
		s.emit("meter_set_rates %s %d 0:%d 0:%d", dataplane.MeterTenant, meter, burst, burst)
	case "send", "expect-routed":
		// send SRC DST OP ...: a datagram from SRC to DST's address, into SRC's port.
		// expect-routed SRC DST OP ...: that datagram routed out of DST's port (MACs of the
		// route, TTL 63, IPv4 checksum recomputed, the rest unchanged).
		if len(args) < 3 {
			return s.errf("%s SRC DST OP ...", cmd)
		}
		src, err1 := s.endpointOf(args[0])
		dst, err2 := s.endpointOf(args[1])
		if err1 != nil || err2 != nil {
			return s.errf("unknown host or server in %q", line)
		}
		f, err := s.fields(args[2], kv(args[3:]))
		if err != nil {
			return err
		}
		p, err := s.payload(&f, m["key"])
		if err != nil {
			return err
		}
		fr := udpframe.Append(nil, udpframe.Endpoint{MAC: src.mac, Addr: src.addr},
			udpframe.Endpoint{MAC: s.swMAC, Addr: dst.addr}, p)
		if cmd == "send" {
			s.emit("packet %d %s", src.port, hexOf(fr))
			break
		}
		copy(fr[0:6], dst.mac[:])
		copy(fr[6:12], s.swMAC[:])
		fr[22]--
		fr[24], fr[25] = 0, 0
		c := udpframe.Checksum(fr[14:34], 0)
		fr[24], fr[25] = byte(c>>8), byte(c)
		s.emit("expect %d %s$", dst.port, hexOf(fr))
	case "expect":
		// expect HOST from=SERVER OP ...: an answer the switch makes, to HOST from SERVER's
		// address: the switch's MAC, TTL 64, no UDP checksum.
		if len(args) < 3 {
			return s.errf("expect HOST from=SERVER OP ...")
		}
		host, err1 := s.endpointOf(args[0])
		srv, err2 := s.endpointOf(strings.TrimPrefix(args[1], "from="))
		if err1 != nil || err2 != nil || !strings.HasPrefix(args[1], "from=") {
			return s.errf("expect HOST from=SERVER OP ...")
		}
		f, err := s.fields(args[2], kv(args[3:]))
		if err != nil {
			return err
		}
		p, err := s.payload(&f, m["key"])
		if err != nil {
			return err
		}
		s.emit("expect %d %s$", host.port, hexOf(udpframe.AppendNoChecksum(nil,
			udpframe.Endpoint{MAC: s.swMAC, Addr: srv.addr}, udpframe.Endpoint{MAC: host.mac, Addr: host.addr}, p)))
	case "send-server", "expect-server":
		if len(args) < 2 {
			return s.errf("%s SERVER OP ...", cmd)
		}
		srv, ok := s.servers[args[0]]
		if !ok {
			return s.errf("unknown server %q", args[0])
		}
		f, err := s.fields(args[1], kv(args[2:]))
		if err != nil {
			return err
		}
		p, err := s.payload(&f, m["key"])
		if err != nil {
			return err
		}
		sw := udpframe.Endpoint{MAC: s.swMAC, Addr: netip.AddrPortFrom(s.swIP, wire.Port)}
		srvEP := udpframe.Endpoint{MAC: srv.mac, Addr: srv.addr}
		if cmd == "send-server" {
			s.emit("packet %d %s", srv.port, hexOf(udpframe.Append(nil, srvEP, sw, p)))
		} else {
			s.emit("expect %d %s$", srv.port, hexOf(udpframe.AppendNoChecksum(nil, sw, srvEP, p)))
		}
	case "send-raw", "expect-raw":
		if len(args) < 2 {
			return s.errf("%s PORT HEX", cmd)
		}
		name := "packet"
		if cmd == "expect-raw" {
			name = "expect"
		}
		s.emit("%s %s %s", name, args[0], strings.Join(args[1:], ""))
	case "admin":
		req, m2, err := s.adminRequest(args)
		if err != nil {
			return err
		}
		port := s.sizing.CPUPort
		if v, ok := m2["port"]; ok {
			if port, err = strconv.Atoi(v); err != nil {
				return s.errf("port: %v", err)
			}
		}
		key := s.key
		if v, ok := m2["key"]; ok {
			if key, err = strconv.ParseUint(v, 0, 64); err != nil {
				return s.errf("key: %v", err)
			}
		}
		s.admins[req.ID] = req
		if port == s.sizing.CPUPort {
			s.emit("packet %d %s", port, hexOf(req.PacketOut(nil, key)))
		} else {
			// From a host's port: the frame alone (no packet_out header there).
			s.emit("packet %d %s", port, hexOf(req.Frame(nil, key)))
		}
	case "expect-admin":
		// expect-admin OP id=N FIELDS...: the reply to the request with that id.
		_, m2, err := s.adminRequest(args)
		if err != nil {
			return err
		}
		id, err := strconv.ParseUint(m2["id"], 0, 16)
		if err != nil {
			return s.errf("expect-admin needs the request's id")
		}
		req, ok := s.admins[uint16(id)]
		if !ok {
			return s.errf("no admin request with id %d", id)
		}
		x, err := s.adminExpect(m2, req)
		if err != nil {
			return err
		}
		s.emit("expect %d %s", s.sizing.CPUPort, x)
	case "drops":
		if len(args) != 2 {
			return s.errf("drops REASON N")
		}
		reason := -1
		for i, n := range dataplane.DropNames {
			if n == args[0] {
				reason = i
			}
		}
		if reason < 0 {
			return s.errf("unknown drop reason %q", args[0])
		}
		s.emit("check_counter %s(%d) packets == %s", dataplane.CounterDrops, reason, args[1])
	case "register":
		if len(args) != 3 {
			return s.errf("register NAME INDEX VALUE")
		}
		v, err := s.num(args[2])
		if err != nil {
			return s.errf("value: %v", err)
		}
		s.emit("register_read %s %s %d", args[0], args[1], v)
	default:
		return s.errf("unknown command %q", cmd)
	}
	return nil
}

// call renders an STF action call with named arguments.
func call(name string, params []string, args [][]byte) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('(')
	for i, a := range args {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s:0x%s", params[i], hex.EncodeToString(a))
	}
	b.WriteByte(')')
	return b.String()
}

// generate translates a scenario file into an STF file.
func generate(path string, src []byte) ([]byte, error) {
	s := &scenario{file: path, sizing: dataplane.DefaultSizing, hosts: map[string]endpoint{}, servers: map[string]endpoint{},
		sessions: map[int]bool{}, admins: map[uint16]*dataplane.AdminRequest{}}
	s.emit("# GENERATED from scenarios/%s by `go test ./p4/dataplane/dpengine -run TestScenarios -update`; do not edit.",
		filepath.Base(path))
	s.emit("# Run: netlock p4 stf --tofino p4/netlock.p4 p4/testdata/%s.stf (or p4/tna/netlock.p4: dpengine.ScenarioSTF)",
		strings.TrimSuffix(filepath.Base(path), ".scn"))
	for i, line := range strings.Split(string(src), "\n") {
		s.line = i + 1
		text := line
		if j := strings.IndexByte(line, '#'); j >= 0 {
			text = line[:j]
		}
		if strings.TrimSpace(line) == "" {
			s.emit("")
			continue
		}
		s.emit("# %s", strings.TrimSpace(line))
		if err := s.translate(strings.TrimSpace(text)); err != nil {
			return nil, err
		}
	}
	return []byte(s.out.String()), nil
}

// TestScenarios checks that each STF file is the translation of its scenario, then runs it,
// unchanged, on each program (p4/netlock.p4 in Tofino-constraint mode, p4/tna/netlock.p4 with
// Tofino's rules, always on for TNA).
func TestScenarios(t *testing.T) {
	srcs, err := filepath.Glob(filepath.Join(scenarioDir, "scenarios", "*.scn"))
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no scenarios in %s: %v", scenarioDir, err)
	}
	for _, run := range pipelineRuns {
		t.Run(run.name, func(t *testing.T) { testScenarios(t, run.prog, run.pl, srcs, nil) })
	}
}

// testScenarios runs the scenarios srcs on prog (its text source when not nil: a changed copy).
func testScenarios(t *testing.T, prog dataplane.Program, pl engine.Pipeline, srcs []string, source []byte) {
	checked, err := loadScenarioProgram(prog, source)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range srcs {
		name := strings.TrimSuffix(filepath.Base(src), ".scn")
		t.Run(name, func(t *testing.T) {
			fails, err := runScenario(checked, prog, pl, src)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range fails {
				t.Error(f)
			}
		})
	}
}

// loadScenarioProgram checks prog, from its text source when source is not nil (a changed copy).
func loadScenarioProgram(prog dataplane.Program, source []byte) (*front.Checked, error) {
	path := filepath.Join("..", "..", filepath.FromSlash(prog.File))
	read := os.ReadFile
	if source != nil {
		read = func(p string) ([]byte, error) {
			if p == path {
				return source, nil
			}
			return os.ReadFile(p)
		}
	}
	return front.LoadOptions(path, front.Options{Defines: prog.Defines, ReadFile: read})
}

// runScenario runs the scenario src, checked against its STF file (which -update rewrites from
// the v1model program's interpreted run), on checked (prog on pl) and returns the STF's failures.
func runScenario(checked *front.Checked, prog dataplane.Program, pl engine.Pipeline, src string) ([]string, error) {
	name := strings.TrimSuffix(filepath.Base(src), ".scn")
	data, err := os.ReadFile(src)
	if err != nil {
		return nil, err
	}
	gen, err := generate(src, data)
	if err != nil {
		return nil, err
	}
	stfPath := filepath.Join(scenarioDir, name+".stf")
	if *updateFlag && prog.Name == dataplane.V1Model.Name && pl == engine.PipelineInterpreted {
		if err := os.WriteFile(stfPath, gen, 0o644); err != nil {
			return nil, err
		}
	}
	have, err := os.ReadFile(stfPath)
	if err != nil {
		return nil, fmt.Errorf("%v (run with -update to generate it)", err)
	}
	if !bytes.Equal(have, gen) {
		return nil, fmt.Errorf("%s is not the translation of %s: run go test ./p4/dataplane/dpengine -run TestScenarios -update", stfPath, src)
	}
	// As netlock p4 stf runs it: no CPU port configured (port 255 is a port), a clock
	// that advances one microsecond per reading.
	now := time.Unix(0, 0)
	sw, err := engine.Load(checked, pipelineConfig(engine.Config{TofinoConstraints: pl != engine.PipelineGenerated,
		Now: func() time.Time { now = now.Add(time.Microsecond); return now }, Pipes: prog.Pipes, Loopback: prog.Loopback}, pl))
	if err != nil {
		return nil, err
	}
	cmds, err := stf.Parse(bytes.NewReader(have))
	if err != nil {
		return nil, err
	}
	cmds = ScenarioSTF(prog.Name, cmds)
	if prog.Pipes > 1 {
		owners, err := RegisterOwners(checked)
		if err != nil {
			return nil, err
		}
		cmds = PipelinesSTF(cmds, sw, func(r string) (string, bool) { o, ok := owners[r]; return o, ok })
	}
	res, err := stf.Run(sw, cmds)
	if err != nil {
		return nil, err
	}
	var fails []string
	for _, f := range res.Failures {
		fails = append(fails, fmt.Sprintf("%s: %s", stfPath, f))
	}
	return fails, nil
}
