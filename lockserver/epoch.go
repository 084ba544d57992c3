package lockserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/netlock-go/netlock/wire"

	"golang.org/x/sys/unix"
)

// epochStore persists what a server must remember across a crash: its token epoch, and the
// longest lease it may have granted (the restart grace a crash leaves behind). The state file
// holds one "key value" line each:
//
//	epoch 7
//	max_lease_us 60000000
//	clean 0b5f...-boot-id 123456789012
//
// "clean" is written by a graceful shutdown (and removed at the next start): on the machine boot
// named, every lease the server granted ends by that CLOCK_BOOTTIME reading (ns), so a restart on
// the same boot waits only for what is left of them. A lock file beside it (flock) keeps two
// servers from sharing one state file. With no path the state lives in memory only. Safe for
// concurrent use.
type epochStore struct {
	mu       sync.Mutex
	path     string   // "" without persistence
	lock     *os.File // holds the flock while the server lives
	epoch    uint64   // the epoch in force, already persisted
	maxLease uint64   // µs, persisted: the longest lease a grant of this or an unfinished earlier run may carry
	clean    string   // the "clean" line to persist ("" while the server runs)
}

// stateOptions are openEpoch's inputs beyond the path.
type stateOptions struct {
	after    uint64        // the epoch to start above (a failed server's, on takeover)
	init     bool          // the state file must not exist yet: create it (a new server)
	maxLease time.Duration // the longest lease this run may grant
	boot     func() (id string, now int64, err error)
}

// openEpoch reads the state file, takes its lock, and moves to an epoch above both the stored
// one and opts.after, persisting it (with the longest lease any grant still running may carry)
// before it returns. It also returns the restart grace: how long the server must grant nothing
// because it found a state file, and so may have granted leases that still run (0 for a new
// server or no path).
//
// A missing state file is an error unless opts.init: a server that ran before and lost its state
// file would start again at epoch 1 and issue fencing tokens below the ones it issued already.
// With opts.init an existing state file is an error too, so that --init cannot stay in a start
// script and recreate a deleted file unnoticed.
func openEpoch(path string, opts stateOptions) (*epochStore, time.Duration, error) {
	s := &epochStore{path: path, maxLease: uint64(opts.maxLease / time.Microsecond)}
	var st state
	var grace time.Duration
	if path != "" {
		if opts.init {
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return nil, 0, fmt.Errorf("state directory: %w", err)
			}
		} else if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil, 0, noState(path)
		}
		lf, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, 0, fmt.Errorf("state file lock: %w", err)
		}
		if err := unix.Flock(int(lf.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			lf.Close()
			return nil, 0, fmt.Errorf("state file %s is in use by another server: %w", path, err)
		}
		s.lock = lf
		found, err := readState(path, &st)
		switch {
		case err != nil:
			s.close()
			return nil, 0, err
		case !found && !opts.init:
			s.close()
			return nil, 0, noState(path)
		case found && opts.init:
			s.close()
			return nil, 0, fmt.Errorf("state file %s exists: this server has run before (epoch %d); start it "+
				"without --init", path, st.epoch)
		case found:
			grace = st.restartGrace(opts.boot)
			s.maxLease = max(s.maxLease, st.maxLease)
		}
	}
	if _, err := s.bump(max(st.epoch, opts.after) + 1); err != nil {
		s.close()
		return nil, 0, err
	}
	return s, grace, nil
}

func noState(path string) error {
	return fmt.Errorf("state file %s does not exist: a server that ran before and lost it would issue fencing "+
		"tokens below those it issued already; if this is a new server, start it once with --init, or point "+
		"--state-file at its state file: %w", path, ErrNoState)
}

// ErrNoState is returned (wrapped) by New when the state file is missing and Config.InitState is
// not set.
var ErrNoState = errors.New("no state file")

// state is the content of a state file.
type state struct {
	epoch    uint64
	maxLease uint64 // µs; 0 in a file of the first format ("epoch N" alone)
	cleanID  string // boot id of a graceful shutdown's record; "" if none
	cleanBy  int64  // CLOCK_BOOTTIME (ns) by which every lease of that run ends
}

// restartGrace is how long a server restarting on st must wait before its first grant: what
// is left, on this boot, of the leases a graceful shutdown recorded, or else the longest lease
// the previous run may have granted, counted from now (the crash came before this start, so the
// wait ends after every lease granted before it; wire.HolderLease says why the lease itself is
// enough). A file of the first format has no max_lease_us: the caller's MaxLease stands in.
func (st *state) restartGrace(boot func() (string, int64, error)) time.Duration {
	if st.cleanID != "" && boot != nil {
		if id, now, err := boot(); err == nil && id == st.cleanID {
			return max(time.Duration(st.cleanBy-now), 0)
		}
	}
	return time.Duration(st.maxLease) * time.Microsecond
}

// readState reads the state file into st; it reports whether the file exists.
func readState(path string, st *state) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("state file: %w", err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("state file %s: %s; refusing to guess the epoch", path, fmt.Sprintf(format, args...))
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if seen[f[0]] {
			return true, bad("%q appears twice", f[0])
		}
		seen[f[0]] = true
		switch {
		case f[0] == "epoch" && len(f) == 2:
			e, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil || e > wire.MaxEpoch {
				return true, bad("epoch %q is not a number in 0..%d", f[1], uint64(wire.MaxEpoch))
			}
			st.epoch = e
		case f[0] == "max_lease_us" && len(f) == 2:
			u, err := strconv.ParseUint(f[1], 10, 32)
			if err != nil {
				return true, bad("max_lease_us %q is not a 32-bit number", f[1])
			}
			st.maxLease = u
		case f[0] == "clean" && len(f) == 3:
			by, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil || f[1] == "" {
				return true, bad("clean %q %q is not a boot id and a time", f[1], f[2])
			}
			st.cleanID, st.cleanBy = f[1], by
		default:
			return true, bad("line %q is not \"epoch N\", \"max_lease_us N\" or \"clean BOOTID NS\"", line)
		}
	}
	if !seen["epoch"] {
		return true, bad("no epoch line")
	}
	return true, nil
}

// bootClock returns the machine's boot id and its CLOCK_BOOTTIME (ns): a monotonic clock that
// keeps running across process restarts (and suspends) until the next boot.
func bootClock() (string, int64, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", 0, fmt.Errorf("boot id: %w", err)
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return "", 0, fmt.Errorf("boot clock: %w", err)
	}
	return strings.TrimSpace(string(b)), ts.Nano(), nil
}

// current returns the epoch in force.
func (s *epochStore) current() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.epoch
}

// bump moves to epoch at least min (and above the current one) and persists it; it returns the
// epoch in force. The file is replaced atomically (temporary file, fsync, rename, fsync of the
// directory), so a crash leaves the old or the new epoch, never a torn one.
func (s *epochStore) bump(min uint64) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if min <= s.epoch {
		return s.epoch, nil
	}
	if min > wire.MaxEpoch {
		return s.epoch, fmt.Errorf("token epoch %d exceeds %d", min, uint64(wire.MaxEpoch))
	}
	if err := s.writeLocked(min, s.maxLease, s.clean); err != nil {
		return s.epoch, err
	}
	s.epoch = min
	return min, nil
}

// setMaxLease persists the longest lease a running grant may carry (µs), once the leases of an
// earlier run (longer ones) have ended.
func (s *epochStore) setMaxLease(us uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if us == s.maxLease {
		return nil
	}
	if err := s.writeLocked(s.epoch, us, s.clean); err != nil {
		return err
	}
	s.maxLease = us
	return nil
}

// markClean records a graceful shutdown: every lease the server granted ends by the boot clock's
// reading by (ns) on boot id.
func (s *epochStore) markClean(id string, by int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	line := fmt.Sprintf("%s %d", id, by)
	if err := s.writeLocked(s.epoch, s.maxLease, line); err != nil {
		return err
	}
	s.clean = line
	return nil
}

func (s *epochStore) writeLocked(epoch, maxLease uint64, clean string) error {
	if s.path == "" {
		return nil
	}
	text := fmt.Sprintf("epoch %d\nmax_lease_us %d\n", epoch, maxLease)
	if clean != "" {
		text += "clean " + clean + "\n"
	}
	return writeState(s.path, text)
}

func writeState(path, text string) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	_, werr := f.WriteString(text)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("state file: write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("state file: sync directory: %w", err)
	}
	return nil
}

// close releases the state file's lock.
func (s *epochStore) close() {
	if s.lock != nil {
		s.lock.Close()
		s.lock = nil
	}
}
