#!/usr/bin/python3
"""The netlock rack on Mininet hosts, one process per component: `netlock switch` running
p4/netlock.p4 on AF_PACKET ports (the P4RuntimeSwitch class), two `netlock server` processes on
their hosts, and `netlock loadgen` client nodes on theirs, running the demo's workloads through
the switch.

With a controller (`--controller yes`, or `auto` when the binary has `netlock controller`), the
controller programs the switch (pipeline, rack, servers, routes, clone sessions) and moves hot locks
into it. It runs in the root namespace (it reaches the switch's P4Runtime port on 127.0.0.1) on a
Mininet host that is not in a namespace, attached to switch port 250 as 10.0.0.2/32, with /32 routes to
the servers only on that interface. Without one (`--controller no`, or `auto` without the command),
the switch is programmed with the rack's bring-up (docs/dataplane.md, "Bring-up": the pipeline,
`set_rack`, the lock servers, a route and a clone session per host) by `netlock p4 push` from a
runtime file this script generates, no lock moves into the switch, and the switch routes every lock
request to its server.

    sudo /usr/bin/python3 testbed/mininet/rack.py --netlock bin/netlock            # run, print, exit
    sudo /usr/bin/python3 testbed/mininet/rack.py --netlock bin/netlock --cli      # the Mininet CLI after
    sudo /usr/bin/python3 testbed/mininet/rack.py --netlock bin/netlock --switch bmv2   # real bmv2

With `--switch bmv2` the switch is bmv2's simple_switch_grpc (from --p4tools, default
$NETLOCK_P4TOOLS or /opt/p4tools; docs/targets.md) running the JSON p4c-bm2-ss compiles from
p4/netlock.p4 into OUT, pushed with the P4Info p4c writes (the controller's pipeline.device_config and
pipeline.p4info, or `netlock p4 push --device-config --p4info`).

It prints where its logs go, a line per step and per finished phase of each client node while it
runs, and at the end the phases' table, the grants, the controller's moves and what the switch
dropped or failed on, by reason. It takes the lock of every Mininet run of the testbed first
(runlock.py), so that it never runs beside another (the Go tests, run.py).

Addresses follow testbed/hostshim's plan (10.0.0.0/16): the switch 10.0.0.1, server n 10.0.1.n on
switch port 100+n, client i 10.0.2.i on port i; MACs 02:00 and the four address bytes. Hosts reach
each other through the switch only (static neighbour entries point every rack address at the
switch's MAC; netlock.p4 does not answer ARP).

Mininet is Debian's (apt-get install mininet); run it with /usr/bin/python3, which has it.
"""

import argparse
import json
import os
import subprocess
import sys
import time

from mininet.cli import CLI
from mininet.log import info, setLogLevel
from mininet.net import Mininet

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from p4runtime_switch import P4RuntimeSwitch  # noqa: E402
import runlock  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "..", "..", "p4", "netlock.p4")

RACK_KEY = 0x6E65746C6F636B  # the rack key (testbed/softrack's default), 16 hex digits in the key file
SWITCH_IP = "10.0.0.1"
CONTROLLER_IP = "10.0.0.2"
LOCK_PORT = 8888
SERVER_PORT_BASE = 100
CONTROLLER_PORT = 250
METRICS_PORT = 9102


START = time.time()


def say(msg):
    """A progress line, with the time since the start."""
    print("[%5.1fs] %s" % (time.time() - START, msg), flush=True)


def mac_for(ip):
    """testbed/hostshim.MACFor: 02:00 and the address's four bytes."""
    return "02:00:" + ":".join("%02x" % int(b) for b in ip.split("."))


def server_ip(n):
    return "10.0.1.%d" % n


def client_ip(i):
    return "10.0.2.%d" % i


def runtime(servers, clients, lease_us):
    """The rack's bring-up as a p4lang/tutorials runtime file for `netlock p4 push`."""
    sw_mac = mac_for(SWITCH_IP)
    entries = [{
        "table": "NetlockIngress.rack", "default_action": True, "action_name": "NetlockIngress.set_rack",
        "action_params": {"key": "0x%016x" % RACK_KEY, "switch_ip": SWITCH_IP, "switch_mac": sw_mac,
                          "default_lease": lease_us, "max_lease": 2 * lease_us}}]
    hosts = []  # (ip, port)
    for n in range(1, servers + 1):
        ip, port = server_ip(n), SERVER_PORT_BASE + n
        hosts.append((ip, port))
        entries.append({"table": "NetlockIngress.lock_servers", "match": {"server": n},
                        "action_name": "NetlockIngress.set_server",
                        "action_params": {"ip": ip, "udp_port": LOCK_PORT, "port": port, "mac": mac_for(ip)}})
    for i in range(1, clients + 1):
        hosts.append((client_ip(i), i))
    for ip, port in hosts:
        entries.append({"table": "NetlockIngress.ipv4_lpm", "match": {"dst": [ip, 32]},
                        "action_name": "NetlockIngress.route",
                        "action_params": {"smac": sw_mac, "dmac": mac_for(ip), "port": port}})
    clones = [{"clone_session_id": port + 1, "replicas": [{"egress_port": port, "instance": 1}]}
              for _, port in hosts]
    return {"target": "netlock", "table_entries": entries, "clone_session_entries": clones}


def compile_bmv2(args):
    """p4/netlock.p4 compiled by p4c-bm2-ss into OUT: the JSON and the P4Info text."""
    json_out = os.path.join(args.out, "netlock.json")
    p4info = os.path.join(args.out, "netlock.p4info.txtpb")
    cmd = [os.path.join(args.p4tools, "bin", "p4c-bm2-ss"), "--std", "p4-16", "-o", json_out,
           "--p4runtime-files", p4info, args.program]
    info("*** %s\n" % " ".join(cmd))
    subprocess.run(cmd, check=True)
    return json_out, p4info


def build(args):
    net = Mininet(controller=None, autoSetMacs=False, autoStaticArp=False)
    bmv2 = os.path.join(args.p4tools, "bin", "simple_switch_grpc") if args.switch == "bmv2" else None
    sw = net.addSwitch(args.prefix + "s1", cls=P4RuntimeSwitch, grpc_port=args.grpc_port, device_id=0,
                       netlock=args.netlock, log_dir=args.out, log_console=False, target=args.switch, bmv2=bmv2)
    servers, clients = [], []
    for n in range(1, args.servers + 1):
        ip = server_ip(n)
        h = net.addHost("%ssrv%d" % (args.prefix, n), ip=ip + "/16", mac=mac_for(ip))
        net.addLink(h, sw, port2=SERVER_PORT_BASE + n, intfName1="eth0",
                    intfName2="%s-eth%d" % (sw.name, SERVER_PORT_BASE + n))
        servers.append(h)
    for i in range(1, args.clients + 1):
        ip = client_ip(i)
        h = net.addHost("%scl%d" % (args.prefix, i), ip=ip + "/16", mac=mac_for(ip))
        net.addLink(h, sw, port2=i, intfName1="eth0", intfName2="%s-eth%d" % (sw.name, i))
        clients.append(h)
    ctl = None
    if args.with_controller:
        # In the root namespace (for the switch's P4Runtime port on 127.0.0.1); its interface keeps a
        # unique name and a /32 address, so the root namespace gets no route to the rack but the
        # servers' (prepare_controller).
        ctl = net.addHost(args.prefix + "ctl", inNamespace=False, ip=CONTROLLER_IP + "/32", mac=mac_for(CONTROLLER_IP))
        net.addLink(ctl, sw, port2=CONTROLLER_PORT, intfName1="%sctl-eth0" % args.prefix,
                    intfName2="%s-eth%d" % (sw.name, CONTROLLER_PORT))
    return net, sw, servers, clients, ctl


def prepare_hosts(hosts, args):
    """Full checksums on the wire (the switch drops a bad IPv4 checksum) and every rack address
    behind the switch's MAC."""
    addrs = [SWITCH_IP, CONTROLLER_IP] + [server_ip(n) for n in range(1, args.servers + 1)] + \
        [client_ip(i) for i in range(1, args.clients + 1)]
    sw_mac = mac_for(SWITCH_IP)
    for h in hosts:
        h.cmd("ethtool -K eth0 rx off tx off sg off >/dev/null 2>&1")
        for a in addrs:
            if a != h.IP():
                h.cmd("ip neigh replace %s lladdr %s dev eth0 nud permanent" % (a, sw_mac))


def prepare_controller(ctl, args):
    """The controller's interface in the root namespace: full checksums, and a /32 route and a static
    neighbour entry (the switch's MAC) for each server, nothing else."""
    intf = "%sctl-eth0" % args.prefix
    ctl.cmd("ethtool -K %s rx off tx off sg off >/dev/null 2>&1" % intf)
    for n in range(1, args.servers + 1):
        ctl.cmd("ip route replace %s/32 dev %s src %s" % (server_ip(n), intf, CONTROLLER_IP))
        ctl.cmd("ip neigh replace %s lladdr %s dev %s nud permanent" % (server_ip(n), mac_for(SWITCH_IP), intf))


def controller_config(args, grpc_port, keyfile):
    """The controller's configuration (netlock controller --config; testbed/rack.yaml explains every
    key): JSON, which the controller reads as strictly as YAML."""
    servers = {str(n): {"addr": "%s:%d" % (server_ip(n), LOCK_PORT), "port": SERVER_PORT_BASE + n,
                        "mac": mac_for(server_ip(n))} for n in range(1, args.servers + 1)}
    hosts = {"controller": {"prefix": CONTROLLER_IP + "/32", "port": CONTROLLER_PORT, "mac": mac_for(CONTROLLER_IP)}}
    for i in range(1, args.clients + 1):
        hosts["client%d" % i] = {"prefix": client_ip(i) + "/32", "port": i, "mac": mac_for(client_ip(i))}
    cfg = {"switch": {"addr": "127.0.0.1:%d" % grpc_port, "device_id": 0, "ip": SWITCH_IP, "mac": mac_for(SWITCH_IP)},
           "rack_key_file": keyfile, "lease": {"default": "%gs" % args.lease, "max": "%gs" % (2 * args.lease)},
           "admin": {"listen": CONTROLLER_IP + ":0"}, "servers": servers, "hosts": hosts,
           "alloc": {"period": "%gms" % (args.alloc_period * 1000)}}
    if args.compiled:
        cfg["pipeline"] = {"device_config": args.compiled[0], "p4info": args.compiled[1]}
    return cfg


def has_controller(netlock):
    return subprocess.run([netlock, "controller", "--help"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def metric(host, name):
    """The value of a metric without labels on a server's Prometheus endpoint (in its namespace)."""
    out = host.cmd("/usr/bin/python3 -c 'import urllib.request; print(urllib.request.urlopen("
                   "\"http://127.0.0.1:%d/metrics\", timeout=5).read().decode())'" % METRICS_PORT)
    for line in out.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def wait_ping(host, ip, timeout):
    """Wait until host reaches ip through the switch (UDP: netlock.p4 routes IPv4; ping is ICMP, also
    routed)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if " 0% packet loss" in host.cmd("ping -c 1 -W 1 %s" % ip):
            return True
        time.sleep(0.2)
    return False


def wait_metric(host, name, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = metric(host, name)
        if v is not None:
            return v
        time.sleep(0.2)
    return None


# What `netlock loadgen` runs without --phases: the demo's phases but crash.
DEFAULT_PHASES = ["shared", "exclusive", "contended/64", "contended/8", "contended/1", "tpcc-high", "tpcc-low"]


def follow_phases(loads, out):
    """Print the client nodes' phase lines (netlock loadgen writes one to its log per finished
    phase) until every node has exited."""
    seen = {}
    while True:
        running = False
        for h, p, _, _ in loads:
            if p.poll() is None:
                running = True
            try:
                with open(os.path.join(out, "%s.log" % h.name)) as f:
                    lines = [ln.rstrip("\n") for ln in f if " phase " in ln and " done: " in ln]
            except OSError:
                continue
            for ln in lines[seen.get(h.name, 0):]:
                say("%s: %s" % (h.name, ln))
            seen[h.name] = len(lines)
        if not running:
            return
        time.sleep(0.5)


def switch_summary(sw):
    """The switch's own summary from its log (netlock switch prints it when it stops): its counters
    and the dropped frames and errors by reason. Empty if there is none (simple_switch_grpc)."""
    try:
        with open(sw.log_file) as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    for i, ln in enumerate(lines):
        if ln.startswith("Switch stopped:"):
            return [ln] + [x for x in lines[i + 1:] if x.startswith("  ")]
    return []


def controller_summary(path):
    """Counts of the controller's moves by direction and outcome, from its log (one INFO line per
    move when it ends)."""
    counts = {}
    try:
        with open(path) as f:
            for ln in f:
                if 'msg="move into the switch"' in ln or 'msg="move out of the switch"' in ln:
                    d = "into the switch" if "into" in ln else "out of the switch"
                    outcome = ln.split("outcome=", 1)[1].split()[0] if "outcome=" in ln else "?"
                    counts[(d, outcome)] = counts.get((d, outcome), 0) + 1
                elif 'msg="stopping: moves cancelled"' in ln:
                    for d, key in (("into the switch", "into_switch="), ("out of the switch", "out_of_switch=")):
                        n = int(ln.split(key, 1)[1].split()[0])
                        if n:
                            counts[(d, "unfinished at the stop")] = n
    except OSError:
        return ""
    return "; ".join("%d %s %s" % (n, outcome, d) for (d, outcome), n in sorted(counts.items()))


def run(net, sw, servers, clients, ctl, args):
    """Program the switch (or start the controller), start the servers and the client nodes, wait
    for the clients; returns the summary (also written to OUT/rack.json)."""
    keyfile = os.path.join(args.out, "rack.key")
    with open(keyfile, "w") as f:
        f.write("%016x\n" % RACK_KEY)
    procs = []
    if ctl is None:
        rt = os.path.join(args.out, "runtime.json")
        with open(rt, "w") as f:
            json.dump(runtime(args.servers, args.clients, int(args.lease * 1e6)), f, indent=1)
        cmd = [args.netlock, "p4", "push", "--addr", "127.0.0.1:%d" % sw.grpc_port, "--device-id", "0"]
        if args.compiled:
            cmd += ["--device-config", args.compiled[0], "--p4info", args.compiled[1]]
        cmd += [args.program, rt]
        info("*** %s\n" % " ".join(cmd))
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        say("switch programmed with the rack's bring-up (netlock p4 push): no controller")
    for n, h in enumerate(servers, 1):
        log = open(os.path.join(args.out, "%s.log" % h.name), "w")
        state = os.path.join(args.out, "%s.state" % h.name)
        argv = [args.netlock, "server", "--listen", "%s:%d" % (server_ip(n), LOCK_PORT),
                "--lease", "%gs" % args.lease, "--max-lease", "%gs" % (2 * args.lease),
                "--rack-key-file", keyfile, "--switch", SWITCH_IP, "--controller", CONTROLLER_IP,
                "--state-file", state, "--metrics-listen", "127.0.0.1:%d" % METRICS_PORT]
        if not os.path.exists(state):
            argv.append("--init")  # a new server; a state file left by an earlier run means a restart
        else:
            say("%s: state file %s from an earlier run: the server restarts and waits out its leases" %
                (h.name, state))
        info("*** %s: %s\n" % (h.name, " ".join(argv)))
        procs.append((h.popen(argv, stdout=log, stderr=log), log))
    try:
        for h in servers:
            if wait_metric(h, "netlock_grants_total", 20) is None:
                raise RuntimeError("%s: the lock server did not come up; see %s.log" % (h.name, h.name))
        say("lock servers up: %s" % ", ".join("%s %s:%d" % (h.name, server_ip(n), LOCK_PORT)
                                                for n, h in enumerate(servers, 1)))
        if ctl is not None:
            cfgfile = os.path.join(args.out, "controller.json")
            with open(cfgfile, "w") as f:
                json.dump(controller_config(args, sw.grpc_port, keyfile), f, indent=1)
            log = open(os.path.join(args.out, "%s.log" % ctl.name), "w")
            argv = [args.controller_bin, "controller", "--config", cfgfile]
            info("*** %s: %s\n" % (ctl.name, " ".join(argv)))
            procs.append((ctl.popen(argv, stdout=log, stderr=log), log))
            # The controller is up once it has programmed the switch: the servers' routes work.
            say("controller started; waiting for it to program the switch")
            if not wait_ping(clients[0], server_ip(1), 30):
                raise RuntimeError("the controller did not program the switch; see %s.log" % ctl.name)
            say("switch programmed by the controller: the servers answer through it")
        servers_arg = ",".join("%s:%d" % (server_ip(n), LOCK_PORT) for n in range(1, args.servers + 1))
        loads = []
        for i, h in enumerate(clients, 1):
            out = os.path.join(args.out, "%s.json" % h.name)
            log = open(os.path.join(args.out, "%s.log" % h.name), "w")
            argv = [args.netlock, "loadgen", "--servers", servers_arg, "--switch", SWITCH_IP,
                    "--node", str(i), "--nodes", str(args.clients), "--workers", str(args.workers),
                    "--duration", "%gs" % args.duration, "--lease", "%gs" % args.lease, "--out", out,
                    "--local", "%s:0" % client_ip(i)]
            if args.phases:
                argv += ["--phases", args.phases]
            if args.record:
                argv += ["--record"]
            info("*** %s: %s\n" % (h.name, " ".join(argv)))
            loads.append((h, h.popen(argv, stdout=log, stderr=log), log, out))
        phases = args.phases.split(",") if args.phases else DEFAULT_PHASES
        say("%d client nodes running %d phases of %gs each (%s); a line per finished phase:" %
            (len(loads), len(phases), args.duration, ",".join(phases)))
        follow_phases(loads, args.out)
        say("client nodes done")
        ok = True
        nodes = []
        for h, p, log, out in loads:
            rc = p.wait()
            log.close()
            if rc != 0:
                ok = False
                print("%s: loadgen exit status %d; see %s.log" % (h.name, rc, h.name))
                continue
            with open(out) as f:
                nodes.append(json.load(f))
        grants = {h.name: metric(h, "netlock_grants_total") for h in servers}
    finally:
        for p, log in procs:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
            log.close()
    summary = {"servers": grants, "nodes": len(nodes), "controller": ctl is not None, "switch": sw.target, "phases": []}
    for k, name in enumerate(p["name"] for p in (nodes[0]["phases"] if nodes else [])):
        ph = [n["phases"][k] for n in nodes]
        dur = max(p["duration_ns"] for p in ph) / 1e9
        s = {"name": name, "txns": sum(p["txns"] for p in ph), "lock_acquires": sum(p["lock_acquires"] for p in ph),
             "txns_per_sec": sum(p["txns_per_sec"] for p in ph), "duration_s": dur,
             "p50_ms_max": max(p["txn_latency"]["p50_ns"] for p in ph) / 1e6,
             "p99_ms_max": max(p["txn_latency"]["p99_ns"] for p in ph) / 1e6,
             "rejects": sum(p["rejects"] for p in ph), "errors": sum(p["errors"] for p in ph)}
        summary["phases"].append(s)
    with open(os.path.join(args.out, "rack.json"), "w") as f:
        json.dump(summary, f, indent=1)
    what = "netlock switch" if sw.target == "netlock" else "bmv2 simple_switch_grpc (p4c-bm2-ss's JSON)"
    print("netlock rack on Mininet: %s (%s) running p4/netlock.p4, %d lock servers, "
          "%d client nodes x %d workers; %s" %
          (sw.name, what, len(servers), len(clients), args.workers,
           "netlock controller" if ctl is not None else "every lock on its server (no controller)"))
    print("%-14s %10s %12s %10s %10s %8s %8s" % ("phase", "txn/s", "acquires", "p50 max", "p99 max", "rejects",
                                                  "errors"))
    for s in summary["phases"]:
        print("%-14s %10.0f %12d %8.2fms %8.2fms %8d %8d" % (s["name"], s["txns_per_sec"], s["lock_acquires"],
                                                             s["p50_ms_max"], s["p99_ms_max"], s["rejects"],
                                                             s["errors"]))
    print("grants sent by the servers: %s" % ", ".join("%s %d" % (k, v or 0) for k, v in sorted(grants.items())))
    acquires = sum(s["lock_acquires"] for s in summary["phases"])
    sent = sum(v or 0 for v in grants.values())
    # A server's count includes grants repeated for retransmitted acquires, so the switch granted at
    # least the difference, never less.
    print("acquisitions: %d; granted by the switch: at least %d" % (acquires, max(acquires - sent, 0)))
    if ctl is not None:
        moves = controller_summary(os.path.join(args.out, "%s.log" % ctl.name))
        print("controller moves: %s" % (moves or "none"))
    return ok and len(nodes) == len(clients), summary


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--netlock", default="netlock", help="the netlock binary")
    ap.add_argument("--program", default=PROGRAM, help="p4/netlock.p4")
    ap.add_argument("--prefix", default="nl", help="prefix of the Mininet node names (interface names are global)")
    ap.add_argument("--servers", type=int, default=2)
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--duration", type=float, default=2.0, help="seconds per phase")
    ap.add_argument("--phases", default="", help="comma-separated phases (default: the demo's but crash)")
    ap.add_argument("--lease", type=float, default=2.0, help="lease in seconds")
    ap.add_argument("--record", action="store_true", help="the client nodes record their histories")
    ap.add_argument("--out", default="/tmp/netlock-mininet-rack", help="logs, runtime file, results")
    ap.add_argument("--grpc-port", type=int, default=50061)
    ap.add_argument("--controller", choices=["auto", "yes", "no"], default="auto",
                    help="start netlock controller (auto: if the binary has the command)")
    ap.add_argument("--controller-bin", default="", help="the binary to run netlock controller from (default: --netlock)")
    ap.add_argument("--alloc-period", type=float, default=0.5, help="the controller's allocation period, seconds")
    ap.add_argument("--cli", action="store_true", help="the Mininet CLI after the run")
    ap.add_argument("--switch", choices=["netlock", "bmv2"], default="netlock",
                    help="the ToR: netlock switch, or bmv2's simple_switch_grpc running p4c-bm2-ss's JSON")
    ap.add_argument("--p4tools", default=os.environ.get("NETLOCK_P4TOOLS", "/opt/p4tools"),
                    help="prefix of the real P4 tools (bin/p4c-bm2-ss, bin/simple_switch_grpc) for --switch bmv2")
    ap.add_argument("--lock-held", action="store_true",
                    help="the caller holds the Mininet lock (runlock.py; the Go tests take it before they run this)")
    args = ap.parse_args()
    if not args.lock_held:
        lock = runlock.take(say)  # noqa: F841 (held until the process exits)
    args.netlock = os.path.abspath(args.netlock) if os.sep in args.netlock else args.netlock
    os.makedirs(args.out, exist_ok=True)
    say("logs, runtime file and results in %s (%s.log: the switch; %s.log ...: servers, "
        "controller, client nodes; rack.json: the summary)" % (args.out, args.prefix + "s1", args.prefix + "srv1"))
    args.controller_bin = os.path.abspath(args.controller_bin) if args.controller_bin else args.netlock
    args.with_controller = args.controller == "yes" or (args.controller == "auto" and has_controller(args.controller_bin))
    args.compiled = compile_bmv2(args) if args.switch == "bmv2" else None
    setLogLevel("info" if args.cli else "warning")
    net, sw, servers, clients, ctl = build(args)
    what = "bmv2's simple_switch_grpc" if args.switch == "bmv2" else "netlock switch on AF_PACKET ports"
    say("starting Mininet: switch %s (%s), %d servers, %d client hosts%s" %
        (sw.name, what, len(servers), len(clients), ", the controller's host" if ctl is not None else ""))
    net.start()
    ok = False
    try:
        prepare_hosts(servers + clients, args)
        if ctl is not None:
            prepare_controller(ctl, args)
        ok, _ = run(net, sw, servers, clients, ctl, args)
        if args.cli:
            CLI(net)
    finally:
        net.stop()
        lines = switch_summary(sw)
        if lines:
            print("switch %s: %s" % (sw.name, lines[0]))
            for ln in lines[1:]:
                print(ln)
        else:
            print("switch %s: no summary in %s" % (sw.name, sw.log_file))
        say("done: %s; logs in %s" % ("ok" if ok else "FAILED", args.out))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
