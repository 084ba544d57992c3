"""The lock that keeps two Mininet runs of netlock's testbed apart: Mininet's interface names are
global, so a second run at once would collide with the first, or delete its interfaces. run.py,
rack.py and the Go tests (lockMininet in mininet_test.go) take the same exclusive flock on
netlock-mininet.lock in the temporary directory (Go's os.TempDir: $TMPDIR, else /tmp), and hold it
until they end.
"""

import fcntl
import os


def lock_path():
    """The lock file, where Go's os.TempDir() puts it."""
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", "netlock-mininet.lock")


def take(say):
    """Take the lock, waiting (and saying so with say) while another run holds it. Returns the open
    file: the lock lasts as long as it stays open, or until the process exits."""
    path = lock_path()
    f = open(path, "a+")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        say("waiting for another Mininet run of netlock to end (it holds %s)" % path)
        fcntl.flock(f, fcntl.LOCK_EX)
    return f
