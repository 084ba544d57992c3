"""A Mininet switch that runs a P4Runtime software switch, in the convention of the p4lang/tutorials
exercises: simple_switch_grpc (bmv2) when it is installed, netlock's own target (`netlock switch`,
which interprets the P4 source) otherwise. Both start without a program (--no-p4); the controller
pushes the pipeline over P4Runtime (`netlock p4 push`).

Written for netlock; not derived from the tutorials' code.
"""

import os
import shutil
import socket
import time

from mininet.log import info, error
from mininet.node import Switch


def wait_for_port(host, port, timeout):
    """Wait until a TCP port accepts connections; True if it did within timeout seconds."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


class P4RuntimeSwitch(Switch):
    """One software switch process per Mininet switch, its ports on the switch's veths.

    grpc_port:  the P4Runtime port on 127.0.0.1 (one per switch)
    device_id:  the P4Runtime device id
    cpu_port:   the CPU port for packet-in/out
    netlock:    the netlock binary (used when simple_switch_grpc is not installed)
    pcap_dir:   if set, per-port pcaps go there
    log_dir:    the switch's log file goes there
    """

    def __init__(self, name, grpc_port=None, device_id=0, cpu_port=255, netlock="netlock",
                 pcap_dir=None, log_dir="/tmp", log_console=False, target=None, bmv2=None, **kwargs):
        Switch.__init__(self, name, **kwargs)
        if grpc_port is None:
            raise ValueError("P4RuntimeSwitch %s: grpc_port is required" % name)
        self.grpc_port = grpc_port
        self.device_id = device_id
        self.cpu_port = cpu_port
        self.netlock = netlock
        self.pcap_dir = pcap_dir
        self.log_file = os.path.join(log_dir, "%s.log" % name)
        self.log_console = log_console
        # target: "bmv2" (simple_switch_grpc: the path in bmv2, or the one on PATH), "netlock", or
        # None for bmv2 when simple_switch_grpc is on PATH.
        self.bmv2 = bmv2 or shutil.which("simple_switch_grpc")
        if target is None:
            target = "bmv2" if self.bmv2 else "netlock"
        if target == "bmv2" and not self.bmv2:
            raise ValueError("P4RuntimeSwitch %s: simple_switch_grpc not found" % name)
        self.target = target
        self.proc = None

    def data_ports(self):
        """(port number, interface name) of every data port."""
        return [(port, intf.name) for port, intf in sorted(self.intfs.items())
                if intf.name != "lo" and not intf.IP()]

    def command(self):
        ifaces = []
        for port, name in self.data_ports():
            ifaces += ["-i", "%d@%s" % (port, name)]
        if self.target == "bmv2":
            args = [self.bmv2] + ifaces + ["--device-id", str(self.device_id), "--no-p4"]
            if self.pcap_dir:
                args += ["--pcap", self.pcap_dir]
            if self.log_console:
                args += ["--log-console"]
            return args + ["--", "--grpc-server-addr", "127.0.0.1:%d" % self.grpc_port,
                           "--cpu-port", str(self.cpu_port)]
        args = [self.netlock, "switch"] + ifaces + [
            "--device-id", str(self.device_id), "--no-p4",
            "--grpc-server-addr", "127.0.0.1:%d" % self.grpc_port,
            "--cpu-port", str(self.cpu_port)]
        if self.pcap_dir:
            args += ["--pcap", self.pcap_dir]
        if self.log_console:
            args += ["--log-console"]
        return args

    def start(self, controllers):
        args = self.command()
        info("*** %s: %s\n" % (self.name, " ".join(args)))
        with open(self.log_file, "w") as log:
            self.proc = self.popen(args, stdout=log, stderr=log)
        if not wait_for_port("127.0.0.1", self.grpc_port, 20):
            error("*** %s: P4Runtime port %d did not open; see %s\n" % (self.name, self.grpc_port, self.log_file))
            raise RuntimeError("%s did not start" % self.name)

    def stop(self, deleteIntfs=True):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except Exception:
                self.proc.kill()
        self.proc = None
        Switch.stop(self, deleteIntfs)
