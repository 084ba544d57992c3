#!/usr/bin/python3
"""Run a topology in the p4lang/tutorials format (topology.json) on P4Runtime software switches:
Mininet hosts, one P4RuntimeSwitch per switch (simple_switch_grpc if installed, else
`netlock switch`), each programmed with `netlock p4 push PROGRAM RUNTIME.json`.

    sudo /usr/bin/python3 testbed/mininet/run.py                 # the Mininet CLI
    sudo /usr/bin/python3 testbed/mininet/run.py --test          # ping and UDP checks, exit status

Mininet is Debian's (apt-get install mininet); run it with /usr/bin/python3, which has it.
Written for netlock; not derived from the tutorials' code.
"""

import argparse
import json
import os
import subprocess
import sys

from mininet.cli import CLI
from mininet.log import info, setLogLevel
from mininet.net import Mininet

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from p4runtime_switch import P4RuntimeSwitch  # noqa: E402
import runlock  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

UDP_SERVER = r"""
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 9999))
s.settimeout(20)
while True:
    data, addr = s.recvfrom(2048)
    s.sendto(data.upper(), addr)
"""

UDP_CLIENT = r"""
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
for attempt in range(5):
    s.sendto(b"netlock over p4", (sys.argv[1], 9999))
    try:
        print(s.recvfrom(2048)[0].decode())
        break
    except socket.timeout:
        pass
"""


def node_port(end):
    """'s1-p2' -> ('s1', 2); 'h1' -> ('h1', None)."""
    if "-p" in end:
        name, port = end.rsplit("-p", 1)
        return name, int(port)
    return end, None


def build(topo, args):
    net = Mininet(controller=None, autoSetMacs=False, autoStaticArp=False)
    switches = {}
    for i, name in enumerate(sorted(topo["switches"])):
        switches[name] = net.addSwitch(name, cls=P4RuntimeSwitch, grpc_port=args.grpc_base_port + i,
                                       device_id=i, netlock=args.netlock, log_dir=args.log_dir,
                                       pcap_dir=args.pcap_dir, log_console=args.log_console)
    for name, h in sorted(topo["hosts"].items()):
        net.addHost(name, ip=h["ip"], mac=h["mac"])
    for a, b in topo["links"]:
        (na, pa), (nb, pb) = node_port(a), node_port(b)
        opts = {}
        for node, port, n in ((na, pa, 1), (nb, pb, 2)):
            if port is not None:
                opts["port%d" % n] = port
                opts["intfName%d" % n] = "%s-eth%d" % (node, port)
            elif node in topo["hosts"]:
                opts["intfName%d" % n] = "eth0"
        net.addLink(na, nb, **opts)
    return net, switches


def program(topo, switches, args, topo_dir):
    prog = os.path.join(topo_dir, topo.get("program", "basic.p4"))
    for name, sw in sorted(switches.items()):
        cmd = [args.netlock, "p4", "push", "--addr", "127.0.0.1:%d" % sw.grpc_port,
               "--device-id", str(sw.device_id), prog]
        rt = topo["switches"][name].get("runtime_json")
        if rt:
            cmd.append(os.path.join(topo_dir, rt))
            if sw.target == "bmv2":
                # bmv2 runs p4c's output: the runtime file names it, as in the tutorials.
                with open(os.path.join(topo_dir, rt)) as f:
                    r = json.load(f)
                cmd[-2:-2] = ["--device-config", os.path.join(topo_dir, r["bmv2_json"]),
                              "--p4info", os.path.join(topo_dir, r["p4info"])]
        info("*** %s\n" % " ".join(cmd))
        subprocess.run(cmd, check=True)


def checks(net, topo, work_dir):
    """Ping between every pair of hosts, UDP from the first to the second; an unrouted address
    must be dropped."""
    hosts = sorted(topo["hosts"])
    ok = True
    for a in hosts:
        for b in hosts:
            if a == b:
                continue
            ip = topo["hosts"][b]["ip"].split("/")[0]
            out = net.get(a).cmd("ping -c 3 -W 2 %s" % ip)
            good = " 0% packet loss" in out
            print("ping %s -> %s: %s" % (a, ip, "ok" if good else "FAILED\n" + out))
            ok = ok and good
    a, b = hosts[0], hosts[1]
    ip = topo["hosts"][b]["ip"].split("/")[0]
    client = os.path.join(work_dir, "udp_client.py")
    with open(client, "w") as f:
        f.write(UDP_CLIENT)
    server = net.get(b).popen(["/usr/bin/python3", "-c", UDP_SERVER])
    try:
        out = net.get(a).cmd("/usr/bin/python3 %s %s" % (client, ip)).strip()
    finally:
        server.terminate()
    good = out.endswith("NETLOCK OVER P4")
    print("udp %s -> %s: %s" % (a, ip, "ok" if good else "FAILED: %r" % out))
    ok = ok and good
    out = net.get(a).cmd("ping -c 2 -W 1 10.9.9.9")
    dropped = "100% packet loss" in out
    print("unrouted 10.9.9.9 dropped: %s" % ("ok" if dropped else "FAILED\n" + out))
    return ok and dropped


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topo", default=os.path.join(HERE, "topology.json"))
    ap.add_argument("--netlock", default="netlock", help="the netlock binary")
    ap.add_argument("--test", action="store_true", help="run the checks and exit (status 0 if they pass)")
    ap.add_argument("--log-dir", default="/tmp/netlock-mininet")
    ap.add_argument("--pcap-dir")
    ap.add_argument("--log-console", action="store_true")
    ap.add_argument("--grpc-base-port", type=int, default=50051)
    ap.add_argument("--lock-held", action="store_true",
                    help="the caller holds the Mininet lock (runlock.py; the Go tests take it before they run this)")
    args = ap.parse_args()
    if not args.lock_held:
        lock = runlock.take(lambda msg: print(msg, flush=True))  # noqa: F841 (held until the process exits)
    os.makedirs(args.log_dir, exist_ok=True)
    setLogLevel("info" if not args.test else "warning")
    with open(args.topo) as f:
        topo = json.load(f)
    net, switches = build(topo, args)
    net.start()
    try:
        for name, h in sorted(topo["hosts"].items()):
            host = net.get(name)
            host.cmd("ethtool -K eth0 rx off tx off sg off >/dev/null 2>&1")  # full checksums on the wire
            for c in h.get("commands", []):
                host.cmd(c)
        program(topo, switches, args, os.path.dirname(os.path.abspath(args.topo)))
        if args.test:
            return 0 if checks(net, topo, args.log_dir) else 1
        CLI(net)
        return 0
    finally:
        net.stop()


if __name__ == "__main__":
    sys.exit(main())
