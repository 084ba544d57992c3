package controller

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/controlplane/p4rtclient"
	"github.com/netlock-go/netlock/internal/config"
	"github.com/netlock-go/netlock/internal/tlsconf"
	"github.com/netlock-go/netlock/p4/dataplane"
)

// Configuration keys of `netlock controller`, as written in its config file (YAML, TOML or
// JSON), as environment variables (NETLOCK_ prefix, dots become underscores) and, where
// ConfigSchema says so, as flags. testbed/rack.yaml is an example.
const (
	KeySwitchAddr = "switch.addr"        // P4Runtime address of the switch
	KeyDeviceID   = "switch.device_id"   // its P4Runtime device id
	KeyElectionID = "switch.election_id" // 0: from the start time, the earlier start is primary
	KeySwitchIP   = "switch.ip"          // the switch's own address (overflow and queue-empty come from it)
	KeySwitchMAC  = "switch.mac"         // the source MAC of the packets it sends to servers
	// TLS to the switch's P4Runtime server (internal/tlsconf): the CA of the switch's
	// certificate, the controller's client certificate and key (mutual TLS), the name to check.
	KeySwitchTLSCA         = "switch.tls.ca"
	KeySwitchTLSCert       = "switch.tls.cert"
	KeySwitchTLSKey        = "switch.tls.key"
	KeySwitchTLSServerName = "switch.tls.server_name"
	KeyProgram             = "program"  // a P4 file to push instead of the embedded p4/netlock.p4
	KeyEmbedded            = "embedded" // the embedded program pushed without one: v1model, tna, tna-fold
	KeyLocks               = "sizing.locks"
	KeyPartBits            = "sizing.part_bits"
	KeyTenantMeters        = "sizing.tenant_meters"
	KeyEnded               = "sizing.ended"
	KeyCPUPort             = "sizing.cpu_port"
	KeyRackKey             = "rack_key"
	KeyRackKeyFile         = "rack_key_file"
	KeyLease               = "lease.default"
	KeyMaxLease            = "lease.max"
	KeyAdminListen         = "admin.listen"  // the UDP address the controller talks to the servers from
	KeyAdminTimeout        = "admin.timeout" // an admin request's answer time
	KeyServers             = "servers"       // NUM: {addr, port, mac, standby_port, standby_mac}
	KeyHosts               = "hosts"         // NAME: {prefix, port, mac}: the other routes
	KeyTenants             = "tenants"       // ID: {meter, rate, burst}
	KeyAllocPeriod         = "alloc.period"
	KeyAllocSlots          = "alloc.slots"
	KeyAllocMaxRegion      = "alloc.max_region"
	KeyAllocStrategy       = "alloc.strategy"
	KeyHysteresis          = "alloc.hysteresis_percent"
	KeyAllocManual         = "alloc.manual"
	KeyAllocEveryLevel     = "alloc.size_every_level"
	KeySweepPeriod         = "sweep_period"
	KeyPingPeriod          = "ping_period"
	KeyDeadAfter           = "dead_after"
	KeyServerLease         = "server_lease"
	KeyLeaseMargin         = "lease_margin"
	KeyStateFile           = "state_file"
	KeyMetricsListen       = "metrics_listen" // formerly metrics_addr (--metrics-addr), still read with a warning
	KeyLogLevel            = "log_level"
)

// A compiled pipeline to push instead of a P4 program (a Tofino under Stratum: bf-p4c's output
// packed by Stratum's bf_pipeline_builder, and bf-p4c's P4Info text; docs/dataplane.md, "Tofino").
const (
	KeyDeviceConfig = "pipeline.device_config"
	KeyP4Info       = "pipeline.p4info"
)

// ConfigSchema returns the configuration schema of `netlock controller` (internal/config loads
// it strictly: an unknown key or a wrong type stops the command naming the key and the file).
func ConfigSchema() *config.Schema {
	return &config.Schema{EnvPrefix: "NETLOCK", Keys: []config.Key{
		{Name: KeySwitchAddr, Type: config.String, Default: "127.0.0.1:9559", Flag: "switch", Usage: "P4Runtime address of the switch", Check: nonEmpty},
		{Name: KeyDeviceID, Type: config.Uint, Default: uint64(0), Flag: "device-id", Usage: "P4Runtime device id of the switch"},
		{Name: KeyElectionID, Type: config.Uint, Default: uint64(0), Flag: "election-id", Usage: "P4Runtime election id (0: from the start time: of two controllers the one started first is primary, the other its backup)"},
		{Name: KeySwitchIP, Type: config.String, Default: "", Usage: "the switch's own IPv4 address (the servers' peers.switches)", Check: nonEmpty},
		{Name: KeySwitchTLSCA, Type: config.String, Default: "", Flag: "switch-tls-ca", Usage: "connect to the switch with TLS, verifying its certificate with this CA (PEM)"},
		{Name: KeySwitchTLSCert, Type: config.String, Default: "", Flag: "switch-tls-cert", Usage: "client certificate (PEM) for a switch that authenticates its controllers"},
		{Name: KeySwitchTLSKey, Type: config.String, Default: "", Flag: "switch-tls-key", Usage: "the client certificate's key (PEM)"},
		{Name: KeySwitchTLSServerName, Type: config.String, Default: "", Usage: "name to check the switch's certificate against (default: the host of switch.addr)"},
		{Name: KeySwitchMAC, Type: config.String, Default: "02:00:00:00:00:fe", Usage: "the switch's MAC (source of the packets it sends to servers)"},
		{Name: KeyProgram, Type: config.String, Default: "", Flag: "program", Usage: "P4 program to push (\"\": the embedded p4/netlock.p4 with the sizing keys)"},
		{Name: KeyEmbedded, Type: config.String, Default: dataplane.V1Model.Label(), Flag: "embedded", Usage: "the embedded program to push when program and pipeline are unset, with the sizing keys: v1model (p4/netlock.p4), tna (p4/tna/netlock.p4) or tna-fold (its Tofino 1 fold: the switch needs --pipes 2 --loopback-port 68 --loopback-port 196)", Check: config.OneOf(dataplane.BuildLabels()...)},
		{Name: KeyDeviceConfig, Type: config.String, Default: "", Flag: "device-config", Usage: "a compiled pipeline's device config to push instead of a P4 program (with pipeline.p4info)"},
		{Name: KeyP4Info, Type: config.String, Default: "", Flag: "p4info", Usage: "the compiled pipeline's P4Info (text format; with pipeline.device_config)"},
		{Name: KeyLocks, Type: config.Int, Default: dataplane.DefaultSizing.Locks, Usage: "NETLOCK_LOCKS of the program", Check: config.Positive},
		{Name: KeyPartBits, Type: config.Int, Default: dataplane.DefaultSizing.PartBits, Usage: "NETLOCK_PART_BITS of the program", Check: config.Positive},
		{Name: KeyTenantMeters, Type: config.Int, Default: dataplane.DefaultSizing.TenantMeters, Usage: "NETLOCK_TENANT_METERS of the program", Check: config.Positive},
		{Name: KeyEnded, Type: config.Int, Default: dataplane.DefaultSizing.Ended, Usage: "NETLOCK_ENDED of the program", Check: config.Positive},
		{Name: KeyCPUPort, Type: config.Int, Default: dataplane.DefaultSizing.CPUPort, Usage: "CPU_PORT of the program", Check: config.Range(1, 510)},
		{Name: KeyRackKey, Type: config.String, Default: "", Usage: "rack key, 16 hex digits (prefer rack_key_file)"},
		{Name: KeyRackKeyFile, Type: config.String, Default: "", Flag: "rack-key-file", Usage: "file holding the rack key (16 hex digits)"},
		{Name: KeyLease, Type: config.Duration, Default: 10 * time.Second, Usage: "the switch's default lease", Check: config.Positive},
		{Name: KeyMaxLease, Type: config.Duration, Default: 60 * time.Second, Usage: "the longest lease the switch grants", Check: config.Positive},
		{Name: KeyAdminListen, Type: config.String, Default: "0.0.0.0:0", Flag: "admin-listen", Usage: "UDP address the controller talks to the lock servers from (in their peers.controllers)", Check: nonEmpty},
		{Name: KeyAdminTimeout, Type: config.Duration, Default: 500 * time.Millisecond, Usage: "how long an admin request to the switch or a server waits for its answer", Check: config.Positive},
		{Name: KeyServers, Type: config.Table, Usage: "lock servers: NUM: {addr, port, mac, standby_port, standby_mac}"},
		{Name: KeyHosts, Type: config.Table, Usage: "other routes (clients, the controller): NAME: {prefix, port, mac}"},
		{Name: KeyTenants, Type: config.Table, Usage: "per-tenant meters of the switch: ID: {meter, rate, burst}"},
		{Name: KeyAllocPeriod, Type: config.Duration, Default: ctlcore.DefaultAllocPeriod, Flag: "alloc-period", Usage: "how often the allocation runs", Check: config.Positive},
		{Name: KeyAllocSlots, Type: config.Int, Default: 0, Usage: "switch queue slots the allocator may use (0: all but the staging slots)", Check: config.NonNegative},
		{Name: KeyAllocMaxRegion, Type: config.Int, Default: ctlcore.DefaultMaxRegion, Usage: "largest region of a lock per priority level", Check: config.Range(1, dataplane.MaxRegion)},
		{Name: KeyAllocStrategy, Type: config.String, Default: "knapsack", Usage: "knapsack (Algorithm 3) or random (the paper's Figure 13 baseline)", Check: config.OneOf("knapsack", "random")},
		{Name: KeyHysteresis, Type: config.Int, Default: 10, Usage: "a new allocation replaces the current one only if its value is this many percent higher", Check: config.Range(0, 1000)},
		{Name: KeyAllocManual, Type: config.Bool, Default: false, Usage: "no periodic allocation (locks stay where they are)"},
		{Name: KeyAllocEveryLevel, Type: config.Bool, Default: false, Usage: "size a switch lock's priority level 1 as its level 0 (for clients that use both levels; default: level 1 gets one slot, so a lock overflowing at level 1 takes back one request per queue-empty)"},
		{Name: KeySweepPeriod, Type: config.Duration, Default: ctlcore.DefaultSweepPeriod, Usage: "how often the switch's queues are probed (lease sweep, the cookie)", Check: config.Positive},
		{Name: KeyPingPeriod, Type: config.Duration, Default: ctlcore.DefaultPingPeriod, Usage: "how often every server is pinged", Check: config.Positive},
		{Name: KeyDeadAfter, Type: config.Int, Default: ctlcore.DefaultDeadAfter, Usage: "pings missed in a row before a server is suspected", Check: config.Range(1, 64)},
		{Name: KeyServerLease, Type: config.Duration, Default: time.Duration(0), Usage: "the servers' controller_lease (0: the servers are not fenced)", Check: config.NonNegative},
		{Name: KeyLeaseMargin, Type: config.Duration, Default: 50 * time.Millisecond, Usage: "margin added to every wait on a lease", Check: config.NonNegative},
		{Name: KeyStateFile, Type: config.String, Default: "", Flag: "state-file", Usage: "file keeping the largest switch token observed across restarts of the controller"},
		{Name: KeyMetricsListen, Type: config.String, Default: "", Flag: "metrics-listen", Usage: "serve Prometheus metrics on this TCP address (e.g. :9103)",
			Deprecated: []string{"metrics_addr"}, DeprecatedFlags: []string{"metrics-addr"}},
		{Name: KeyLogLevel, Type: config.String, Default: "info", Flag: "log-level", Usage: "debug, info, warn or error", Check: config.OneOf("debug", "info", "warn", "error")},
	}}
}

func nonEmpty(v any) error {
	if v.(string) == "" {
		return errors.New("must not be empty")
	}
	return nil
}

// FileConfig is what `netlock controller` reads from its configuration: the Controller's Config
// (without its admin socket, which the command opens on AdminListen) and the command's own
// settings.
type FileConfig struct {
	Config
	AdminListen   string
	MetricsListen string
	LogLevel      string
	// Warnings are the configuration's warnings (deprecated names used), for the command to log.
	Warnings []string
}

// ConfigFromValues builds a FileConfig from values loaded with ConfigSchema and checks what no
// single key can (servers, hosts, tenants, the rack key, the leases); then the core's own
// validation runs. Errors name the key and where its value came from. No socket is opened.
func ConfigFromValues(v *config.Values) (FileConfig, error) {
	var fc FileConfig
	fc.AdminListen, fc.MetricsListen, fc.LogLevel = v.String(KeyAdminListen), v.String(KeyMetricsListen), v.String(KeyLogLevel)
	fc.Warnings = v.Warnings()
	c := &fc.Config
	c.AdminTimeout, c.StateFile = v.Duration(KeyAdminTimeout), v.String(KeyStateFile)
	c.Switch = p4rtclient.Config{Addr: v.String(KeySwitchAddr), DeviceID: v.Uint(KeyDeviceID),
		ElectionID: p4rtclient.ElectionID{Low: v.Uint(KeyElectionID)}}
	if ca, cert, key, name := v.String(KeySwitchTLSCA), v.String(KeySwitchTLSCert), v.String(KeySwitchTLSKey),
		v.String(KeySwitchTLSServerName); ca != "" || cert != "" || key != "" || name != "" {
		if ca == "" {
			return FileConfig{}, v.Errorf(KeySwitchTLSCA, "must be set with %s, %s or %s", KeySwitchTLSCert, KeySwitchTLSKey,
				KeySwitchTLSServerName)
		}
		tc, err := tlsconf.Client(ca, cert, key, name)
		if err != nil {
			return FileConfig{}, v.Errorf(KeySwitchTLSCA, "%v", err)
		}
		c.Switch.TLS = tc
	}
	if c.Switch.ElectionID.Low == 0 {
		// An earlier start gets a higher id: the controller started first stays primary and one
		// started later waits as its backup.
		c.Switch.ElectionID.Low = math.MaxInt64 - uint64(time.Now().UnixNano())
	}
	if _, err := net.ResolveUDPAddr("udp", fc.AdminListen); err != nil {
		return FileConfig{}, v.Errorf(KeyAdminListen, "%v", err)
	}
	cc := &c.Core
	cc.Sizing = dataplane.Sizing{Locks: v.Int(KeyLocks), PartBits: v.Int(KeyPartBits), TenantMeters: v.Int(KeyTenantMeters),
		Ended: v.Int(KeyEnded), CPUPort: v.Int(KeyCPUPort)}
	if err := cc.Sizing.Validate(); err != nil {
		return FileConfig{}, v.Errorf(KeyLocks, "%v", err)
	}
	embedded, err := dataplane.BuildNamed(v.String(KeyEmbedded))
	if err != nil {
		return FileConfig{}, v.Errorf(KeyEmbedded, "%v", err)
	}
	c.Embedded = embedded
	if p := v.String(KeyProgram); p != "" {
		prog, err := p4rtclient.LoadProgram(p)
		if err != nil {
			return FileConfig{}, v.Errorf(KeyProgram, "%v", err)
		}
		c.Program = prog
	}
	switch dc, info := v.String(KeyDeviceConfig), v.String(KeyP4Info); {
	case dc == "" && info == "":
	case dc == "":
		return FileConfig{}, v.Errorf(KeyP4Info, "needs %s too", KeyDeviceConfig)
	case info == "":
		return FileConfig{}, v.Errorf(KeyDeviceConfig, "needs %s too", KeyP4Info)
	case c.Program != nil:
		return FileConfig{}, v.Errorf(KeyDeviceConfig, "give %s or a compiled pipeline, not both", KeyProgram)
	default:
		prog, err := p4rtclient.LoadCompiled(dc, info)
		if err != nil {
			return FileConfig{}, v.Errorf(KeyDeviceConfig, "%v", err)
		}
		c.Program = prog
	}
	ip, err := netip.ParseAddr(v.String(KeySwitchIP))
	if err != nil || !ip.Is4() {
		return FileConfig{}, v.Errorf(KeySwitchIP, "%q: want an IPv4 address", v.String(KeySwitchIP))
	}
	mac, err := parseMAC(v.String(KeySwitchMAC))
	if err != nil {
		return FileConfig{}, v.Errorf(KeySwitchMAC, "%v", err)
	}
	key, err := rackKey(v)
	if err != nil {
		return FileConfig{}, err
	}
	if key == 0 {
		return FileConfig{}, v.Errorf(KeyRackKeyFile, "no rack key: set %s or %s (the switch refuses admin packets without it)", KeyRackKeyFile, KeyRackKey)
	}
	cc.Rack = dataplane.Rack{Key: key, SwitchIP: ip, SwitchMAC: mac, DefaultLease: v.Duration(KeyLease), MaxLease: v.Duration(KeyMaxLease)}
	if cc.Rack.MaxLease < cc.Rack.DefaultLease {
		return FileConfig{}, v.Errorf(KeyMaxLease, "%v is below %s %v", cc.Rack.MaxLease, KeyLease, cc.Rack.DefaultLease)
	}
	if err := servers(v, cc); err != nil {
		return FileConfig{}, err
	}
	if err := hosts(v, cc); err != nil {
		return FileConfig{}, err
	}
	if err := tenants(v, cc); err != nil {
		return FileConfig{}, err
	}
	cc.AllocPeriod, cc.Slots, cc.MaxRegion = v.Duration(KeyAllocPeriod), v.Int(KeyAllocSlots), v.Int(KeyAllocMaxRegion)
	cc.Manual = v.Bool(KeyAllocManual)
	cc.SizeEveryLevel = v.Bool(KeyAllocEveryLevel)
	cc.Hysteresis = float64(v.Int(KeyHysteresis)) / 100
	if v.String(KeyAllocStrategy) == "random" {
		cc.Strategy = alloc.StrategyRandom
	}
	cc.SweepPeriod, cc.PingPeriod, cc.DeadAfter = v.Duration(KeySweepPeriod), v.Duration(KeyPingPeriod), v.Int(KeyDeadAfter)
	cc.ServerLease, cc.LeaseMargin = v.Duration(KeyServerLease), v.Duration(KeyLeaseMargin)
	if err := fc.validate(); err != nil {
		return FileConfig{}, fmt.Errorf("config: %w", err)
	}
	if _, err := ctlcore.New(*cc); err != nil {
		return FileConfig{}, fmt.Errorf("config: %w", err)
	}
	return fc, nil
}

// validate checks what ConfigFromValues cannot see key by key: the fields Config.validate
// checks, except the admin socket, which the command opens later.
func (fc *FileConfig) validate() error {
	c := fc.Config
	c.AdminConn = noConn{}
	return c.validate()
}

// noConn stands in for the admin socket in FileConfig.validate.
type noConn struct{ net.PacketConn }

// ParseConfig reads a config file's content in format ("yaml", "toml", "json") over the
// defaults, strictly, without environment or flags.
func ParseConfig(data []byte, format string) (FileConfig, error) {
	v, err := ConfigSchema().LoadBytes(data, format)
	if err != nil {
		return FileConfig{}, err
	}
	return ConfigFromValues(v)
}

func parseMAC(s string) (dataplane.MAC, error) {
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		return dataplane.MAC{}, fmt.Errorf("%q: want an Ethernet MAC (02:00:00:00:00:01)", s)
	}
	return dataplane.MAC(hw), nil
}

func rackKey(v *config.Values) (uint64, error) {
	k, err := config.RackKey(v, KeyRackKey, KeyRackKeyFile)
	return uint64(k), err
}

// section reads the sub-keys of one entry of a Table key: every sub-key must be one of want.
func section(v *config.Values, key, name string, val any, want ...string) (map[string]any, error) {
	sub, ok := val.(map[string]any)
	if !ok {
		return nil, v.Errorf(key+"."+name, "want a section %v, got %v", want, val)
	}
	for k := range sub {
		if !slices.Contains(want, k) {
			return nil, v.Errorf(key+"."+name, "unknown key %s (want %v)", k, want)
		}
	}
	return sub, nil
}

// macAt reads the required MAC sub[k] of the table at path.
func macAt(v *config.Values, path string, sub map[string]any, k string) (dataplane.MAC, error) {
	text, err := str(v, path, sub, k, true)
	if err != nil {
		return dataplane.MAC{}, err
	}
	mac, err := parseMAC(text)
	if err != nil {
		return dataplane.MAC{}, v.Errorf(path+"."+k, "%v", err)
	}
	return mac, nil
}

func str(v *config.Values, path string, sub map[string]any, k string, required bool) (string, error) {
	x, ok := sub[k]
	if !ok {
		if required {
			return "", v.Errorf(path, "missing %s", k)
		}
		return "", nil
	}
	s, ok := x.(string)
	if !ok {
		return "", v.Errorf(path+"."+k, "%v: want a string", x)
	}
	return s, nil
}

func whole(v *config.Values, path string, sub map[string]any, k string, required bool, lo, hi int64) (int64, bool, error) {
	x, ok := sub[k]
	if !ok {
		if required {
			return 0, false, v.Errorf(path, "missing %s", k)
		}
		return 0, false, nil
	}
	var n int64
	switch y := x.(type) {
	case int:
		n = int64(y)
	case int64:
		n = y
	case uint64:
		if y > math.MaxInt64 {
			return 0, false, v.Errorf(path+"."+k, "%v: out of range %d..%d", x, lo, hi)
		}
		n = int64(y)
	case float64:
		if y != math.Trunc(y) || math.Abs(y) > 1<<53 {
			return 0, false, v.Errorf(path+"."+k, "%v: want an integer", x)
		}
		n = int64(y)
	default:
		return 0, false, v.Errorf(path+"."+k, "%v: want an integer", x)
	}
	if n < lo || n > hi {
		return 0, false, v.Errorf(path+"."+k, "%d: out of range %d..%d", n, lo, hi)
	}
	return n, true, nil
}

func servers(v *config.Values, cc *ctlcore.Config) error {
	m := v.Table(KeyServers)
	if len(m) == 0 {
		return v.Errorf(KeyServers, "no lock servers configured (NUM: {addr, port, mac})")
	}
	nums := make([]string, 0, len(m))
	for k := range m {
		nums = append(nums, k)
	}
	slices.Sort(nums)
	for _, k := range nums {
		num, err := strconv.ParseUint(k, 10, 8)
		if err != nil || num == 0 {
			return v.Errorf(KeyServers, "server %q: want a number in 1..255", k)
		}
		path := KeyServers + "." + k
		sub, err := section(v, KeyServers, k, m[k], "addr", "port", "mac", "standby_port", "standby_mac")
		if err != nil {
			return err
		}
		addrText, err := str(v, path, sub, "addr", true)
		if err != nil {
			return err
		}
		addr, err := netip.ParseAddrPort(addrText)
		if err != nil || !addr.Addr().Is4() {
			return v.Errorf(path+".addr", "%q: want IPv4:port", addrText)
		}
		port, _, err := whole(v, path, sub, "port", true, 0, 510)
		if err != nil {
			return err
		}
		mac, err := macAt(v, path, sub, "mac")
		if err != nil {
			return err
		}
		cc.Servers = append(cc.Servers, ctlcore.Server{Num: uint16(num), Addr: addr, Port: int(port), MAC: mac})
		sport, hasStandby, err := whole(v, path, sub, "standby_port", false, 0, 510)
		if err != nil {
			return err
		}
		smacText, err := str(v, path, sub, "standby_mac", hasStandby)
		if err != nil {
			return err
		}
		if !hasStandby {
			if smacText != "" {
				return v.Errorf(path, "standby_mac without standby_port")
			}
			continue
		}
		smac, err := parseMAC(smacText)
		if err != nil {
			return v.Errorf(path+".standby_mac", "%v", err)
		}
		cc.Standbys = append(cc.Standbys, ctlcore.Standby{Num: uint16(num), Port: int(sport), MAC: smac})
	}
	return nil
}

func hosts(v *config.Values, cc *ctlcore.Config) error {
	m := v.Table(KeyHosts)
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		path := KeyHosts + "." + k
		sub, err := section(v, KeyHosts, k, m[k], "prefix", "port", "mac")
		if err != nil {
			return err
		}
		pt, err := str(v, path, sub, "prefix", true)
		if err != nil {
			return err
		}
		p, err := netip.ParsePrefix(pt)
		if err != nil {
			// A single address is a /32.
			a, aerr := netip.ParseAddr(pt)
			if aerr != nil {
				return v.Errorf(path+".prefix", "%q: want an IPv4 prefix (10.0.2.0/24) or address", pt)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		port, _, err := whole(v, path, sub, "port", true, 0, 510)
		if err != nil {
			return err
		}
		mac, err := macAt(v, path, sub, "mac")
		if err != nil {
			return err
		}
		cc.Hosts = append(cc.Hosts, ctlcore.Host{Prefix: p.Masked(), Port: int(port), MAC: mac})
	}
	return nil
}

func tenants(v *config.Values, cc *ctlcore.Config) error {
	m := v.Table(KeyTenants)
	ids := make([]string, 0, len(m))
	for k := range m {
		ids = append(ids, k)
	}
	slices.Sort(ids)
	for _, k := range ids {
		id, err := strconv.ParseUint(k, 10, 16)
		if err != nil {
			return v.Errorf(KeyTenants, "tenant %q is not a 16-bit number", k)
		}
		path := KeyTenants + "." + k
		sub, err := section(v, KeyTenants, k, m[k], "meter", "rate", "burst")
		if err != nil {
			return err
		}
		meter, _, err := whole(v, path, sub, "meter", true, 0, math.MaxInt32)
		if err != nil {
			return err
		}
		rate, _, err := whole(v, path, sub, "rate", true, 1, math.MaxInt32)
		if err != nil {
			return err
		}
		burst, _, err := whole(v, path, sub, "burst", false, 0, math.MaxInt32)
		if err != nil {
			return err
		}
		cc.Tenants = append(cc.Tenants, ctlcore.Tenant{ID: uint16(id), Meter: int(meter), Rate: float64(rate), Burst: uint64(burst)})
	}
	return nil
}
