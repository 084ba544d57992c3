// Package p4ctl is a small P4Runtime controller for netlock's software switch and bmv2: it loads a
// P4 program (the device config is netlock's P4 source bundle, the P4Info comes from the front end),
// pushes it with SetForwardingPipelineConfig, and installs the table entries, multicast groups and
// clone sessions of a runtime file in the format of the p4lang/tutorials exercises (runtime.json).
// It drives the switch through netlock's controlplane package (on
// github.com/antoninbas/p4runtime-go-client); `netlock p4 push` is its command line, and the
// Mininet scripts in testbed/mininet use it to program each switch.
package p4ctl

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/netlock-go/netlock/controlplane/p4rtclient"
)

// Program is a P4 program ready to push (see p4rtclient.Program).
type Program = p4rtclient.Program

// LoadCompiled reads a program compiled for another target: a device config file (for bmv2, the
// JSON p4c-bm2-ss writes) and its P4Info in text format.
func LoadCompiled(deviceConfig, p4info string) (*Program, error) {
	return p4rtclient.LoadCompiled(deviceConfig, p4info)
}

// LoadProgram reads a P4 program and every other .p4 file of its directory (the files it may
// #include) into a bundle, and checks it with the front end to produce its P4Info.
func LoadProgram(path string) (*Program, error) { return p4rtclient.LoadProgram(path) }

// Runtime is a runtime file of the p4lang/tutorials exercises. Its "target", "p4info" and
// "bmv2_json" fields are ignored: the program comes from LoadProgram.
type Runtime struct {
	TableEntries          []TableEntry   `json:"table_entries"`
	MulticastGroupEntries []MulticastGrp `json:"multicast_group_entries"`
	CloneSessionEntries   []CloneSession `json:"clone_session_entries"`
}

// TableEntry is one entry of a runtime file. Match values are numbers, strings holding a number
// ("0x1f", "42"), an IPv4 address or a MAC address; lpm takes [value, prefix length], ternary
// [value, mask], range [low, high]; exact and optional take the value alone.
type TableEntry struct {
	Table         string                     `json:"table"`
	DefaultAction bool                       `json:"default_action"`
	Match         map[string]json.RawMessage `json:"match"`
	ActionName    string                     `json:"action_name"`
	ActionParams  map[string]json.RawMessage `json:"action_params"`
	Priority      int32                      `json:"priority"`
}

// MulticastGrp and CloneSession are the replication entries of a runtime file.
type MulticastGrp struct {
	ID       uint32    `json:"multicast_group_id"`
	Replicas []Replica `json:"replicas"`
}

type CloneSession struct {
	ID           uint32    `json:"clone_session_id"`
	Replicas     []Replica `json:"replicas"`
	PacketLength int32     `json:"packet_length_bytes"`
}

type Replica struct {
	EgressPort uint32 `json:"egress_port"`
	Instance   uint32 `json:"instance"`
}

// ParseRuntime decodes a runtime file.
func ParseRuntime(data []byte) (*Runtime, error) {
	var rt Runtime
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&rt); err != nil {
		return nil, fmt.Errorf("p4ctl: runtime file: %w", err)
	}
	return &rt, nil
}

// Session is a primary controller connection to one device: a p4rtclient.Client, which ends
// its stream without the client library's error logs, and the library's client for the
// runtime-file helpers.
type Session struct {
	C  *client.Client
	cp *p4rtclient.Client
}

// Dial connects to the P4Runtime server at addr and becomes the primary controller of deviceID
// (election id 1, or higher if given), waiting until arbitration says so or ctx ends. tc, if not
// nil, secures the connection (internal/tlsconf.Client).
func Dial(ctx context.Context, addr string, deviceID uint64, electionID uint64, tc *tls.Config) (*Session, error) {
	if electionID == 0 {
		electionID = 1
	}
	cp, err := p4rtclient.Dial(p4rtclient.Config{Addr: addr, DeviceID: deviceID, ElectionID: p4rtclient.ElectionID{Low: electionID},
		TLS: tc})
	if err != nil {
		return nil, fmt.Errorf("p4ctl: %w", err)
	}
	if err := cp.WaitPrimary(ctx); err != nil {
		cp.Close()
		return nil, fmt.Errorf("p4ctl: %w", err)
	}
	return &Session{C: cp.P4RT(), cp: cp}, nil
}

// Close ends the session: the stream ends, the switch elects another primary if there is one.
func (s *Session) Close() { s.cp.Close() }

// Push installs the program with SetForwardingPipelineConfig (VERIFY_AND_COMMIT), with the
// current time as the cookie.
func (s *Session) Push(ctx context.Context, p *Program) error {
	if err := s.cp.SetPipeline(ctx, p, uint64(time.Now().UnixNano())); err != nil {
		return fmt.Errorf("p4ctl: set pipeline: %w", err)
	}
	return nil
}

// Apply installs the entries of a runtime file, in order: table entries (default actions as
// MODIFY), multicast groups, clone sessions.
func (s *Session) Apply(ctx context.Context, info *p4configv1.P4Info, rt *Runtime) error {
	for i, te := range rt.TableEntries {
		e, err := s.tableEntry(info, &te)
		if err != nil {
			return fmt.Errorf("p4ctl: table entry %d (%s): %w", i, te.Table, err)
		}
		if te.DefaultAction {
			err = s.C.ModifyTableEntry(ctx, e)
		} else {
			err = s.C.InsertTableEntry(ctx, e)
		}
		if err != nil {
			return fmt.Errorf("p4ctl: table entry %d (%s): %w", i, te.Table, err)
		}
	}
	for _, g := range rt.MulticastGroupEntries {
		if err := s.C.InsertMulticastGroup(ctx, g.ID, ports(g.Replicas)); err != nil {
			return fmt.Errorf("p4ctl: multicast group %d: %w", g.ID, err)
		}
	}
	for _, cs := range rt.CloneSessionEntries {
		if err := s.C.InsertCloneSession(ctx, cs.ID, ports(cs.Replicas),
			client.CloneSessionOptions{PacketLenBytes: cs.PacketLength}); err != nil {
			return fmt.Errorf("p4ctl: clone session %d: %w", cs.ID, err)
		}
	}
	return nil
}

func ports(rs []Replica) []uint32 {
	var p []uint32
	for _, r := range rs {
		p = append(p, r.EgressPort)
	}
	return p
}

func (s *Session) tableEntry(info *p4configv1.P4Info, te *TableEntry) (*p4v1.TableEntry, error) {
	t := findTable(info, te.Table)
	if t == nil {
		return nil, fmt.Errorf("no table %q in the P4Info", te.Table)
	}
	a := findAction(info, te.ActionName)
	if a == nil {
		return nil, fmt.Errorf("no action %q in the P4Info", te.ActionName)
	}
	var params [][]byte
	for _, p := range a.Params {
		raw, ok := te.ActionParams[p.Name]
		if !ok {
			return nil, fmt.Errorf("action %s: missing parameter %q", te.ActionName, p.Name)
		}
		v, err := encodeValue(raw, int(p.Bitwidth))
		if err != nil {
			return nil, fmt.Errorf("action %s parameter %s: %w", te.ActionName, p.Name, err)
		}
		params = append(params, v)
	}
	if len(te.ActionParams) != len(a.Params) {
		return nil, fmt.Errorf("action %s takes %d parameters, the entry gives %d", te.ActionName, len(a.Params), len(te.ActionParams))
	}
	action := s.C.NewTableActionDirect(te.ActionName, params)
	if te.DefaultAction {
		e := s.C.NewTableEntry(te.Table, nil, action, nil)
		e.IsDefaultAction = true
		return e, nil
	}
	mfs := map[string]client.MatchInterface{}
	for name, raw := range te.Match {
		i := slices.IndexFunc(t.MatchFields, func(m *p4configv1.MatchField) bool { return m.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("no match field %q", name)
		}
		m, err := matchOf(t.MatchFields[i], raw)
		if err != nil {
			return nil, fmt.Errorf("match field %s: %w", name, err)
		}
		mfs[name] = m
	}
	var opts *client.TableEntryOptions
	if te.Priority != 0 {
		opts = &client.TableEntryOptions{Priority: te.Priority}
	}
	return s.C.NewTableEntry(te.Table, mfs, action, opts), nil
}

func findTable(info *p4configv1.P4Info, name string) *p4configv1.Table {
	for _, t := range info.Tables {
		if t.Preamble.Name == name || t.Preamble.Alias == name {
			return t
		}
	}
	return nil
}

func findAction(info *p4configv1.P4Info, name string) *p4configv1.Action {
	for _, a := range info.Actions {
		if a.Preamble.Name == name || a.Preamble.Alias == name {
			return a
		}
	}
	return nil
}

func matchOf(mf *p4configv1.MatchField, raw json.RawMessage) (client.MatchInterface, error) {
	w := int(mf.Bitwidth)
	pair := func() (json.RawMessage, json.RawMessage, error) {
		var two []json.RawMessage
		if err := json.Unmarshal(raw, &two); err != nil || len(two) != 2 {
			return nil, nil, fmt.Errorf("want a pair [a, b], got %s", raw)
		}
		return two[0], two[1], nil
	}
	switch mf.GetMatchType() {
	case p4configv1.MatchField_EXACT:
		v, err := encodeValue(raw, w)
		return &client.ExactMatch{Value: v}, err
	case p4configv1.MatchField_OPTIONAL:
		v, err := encodeValue(raw, w)
		return &client.OptionalMatch{Value: v}, err
	case p4configv1.MatchField_LPM:
		a, b, err := pair()
		if err != nil {
			return nil, err
		}
		v, err := encodeValue(a, w)
		if err != nil {
			return nil, err
		}
		var plen int32
		if err := json.Unmarshal(b, &plen); err != nil || plen < 0 || int(plen) > w {
			return nil, fmt.Errorf("prefix length %s: want 0..%d", b, w)
		}
		return &client.LpmMatch{Value: v, PLen: plen}, nil
	case p4configv1.MatchField_TERNARY:
		a, b, err := pair()
		if err != nil {
			return nil, err
		}
		v, err := encodeValue(a, w)
		if err != nil {
			return nil, err
		}
		m, err := encodeValue(b, w)
		return &client.TernaryMatch{Value: v, Mask: m}, err
	case p4configv1.MatchField_RANGE:
		a, b, err := pair()
		if err != nil {
			return nil, err
		}
		lo, err := encodeValue(a, w)
		if err != nil {
			return nil, err
		}
		hi, err := encodeValue(b, w)
		return &client.RangeMatch{Low: lo, High: hi}, err
	}
	return nil, fmt.Errorf("match kind %v not supported", mf.GetMatchType())
}

// encodeValue turns a runtime-file value into big-endian bytes of the field's width.
func encodeValue(raw json.RawMessage, width int) ([]byte, error) {
	n := (width + 7) / 8
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		var num json.Number
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.UseNumber()
		if err := dec.Decode(&num); err != nil {
			return nil, fmt.Errorf("value %s: want a number or a string", raw)
		}
		s = num.String()
	}
	out := make([]byte, n)
	switch {
	case strings.Count(s, ".") == 3 && net.ParseIP(s).To4() != nil:
		if width != 32 {
			return nil, fmt.Errorf("IPv4 address %s for a %d-bit field", s, width)
		}
		copy(out, net.ParseIP(s).To4())
		return out, nil
	case strings.Count(s, ":") == 5:
		mac, err := net.ParseMAC(s)
		if err != nil || len(mac) != 6 {
			return nil, fmt.Errorf("MAC address %q: %v", s, err)
		}
		if width != 48 {
			return nil, fmt.Errorf("MAC address %s for a %d-bit field", s, width)
		}
		copy(out, mac)
		return out, nil
	}
	v, ok := new(big.Int).SetString(strings.ReplaceAll(s, "_", ""), 0)
	if !ok || v.Sign() < 0 {
		return nil, fmt.Errorf("value %q: not a non-negative number, IPv4 or MAC address", s)
	}
	if v.BitLen() > width {
		return nil, fmt.Errorf("value %s does not fit %d bits", s, width)
	}
	return v.FillBytes(out), nil
}
