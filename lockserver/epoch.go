package lockserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Fencing tokens are epoch-major: token = epoch<<EpochShift + n, where n counts the grants of one
// shard within the epoch. The epoch is persisted in the server's state file and bumped (written
// and fsync'd) before the server grants anything, so a restarted server issues larger tokens than
// before its restart whatever its clock says; a server that takes over another's locks is handed
// the other's epoch (Config.TakeoverEpoch) and starts above it.
const (
	// EpochShift is the number of low token bits that count grants within an epoch.
	EpochShift = 40
	// MaxEpoch is the largest epoch: the epoch has the 24 high bits of a token.
	MaxEpoch = 1<<(64-EpochShift) - 1
	// epochRefill is how far into an epoch a shard may count before the server moves every shard
	// to the next epoch (half the range: ample time to persist the bump).
	epochRefill = 1 << (EpochShift - 1)
)

// epochBase returns the first token value of epoch e (the first grant gets one more).
func epochBase(e uint64) uint64 { return e << EpochShift }

// epochStore persists a server's token epoch. The state file holds one line, "epoch N". A lock
// file beside it (flock) keeps two servers from sharing one state file. With no path the epoch
// lives in memory only. Safe for concurrent use.
type epochStore struct {
	mu    sync.Mutex
	path  string   // "" without persistence
	lock  *os.File // holds the flock while the server lives
	epoch uint64   // the epoch in force, already persisted
}

// openEpoch reads the state file (a missing file is epoch 0), takes its lock, and moves to an
// epoch above both the stored one and after, persisting it before it returns.
func openEpoch(path string, after uint64) (*epochStore, error) {
	s := &epochStore{path: path}
	var stored uint64
	if path != "" {
		lf, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("state file lock: %w", err)
		}
		if err := unix.Flock(int(lf.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			lf.Close()
			return nil, fmt.Errorf("state file %s is in use by another server: %w", path, err)
		}
		s.lock = lf
		if stored, err = readEpoch(path); err != nil {
			s.close()
			return nil, err
		}
	}
	if _, err := s.bump(max(stored, after) + 1); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func readEpoch(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("state file: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] != "epoch" {
		return 0, fmt.Errorf("state file %s: want one line \"epoch N\"; refusing to guess the epoch", path)
	}
	e, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil || e > MaxEpoch {
		return 0, fmt.Errorf("state file %s: epoch %q is not a number in 0..%d", path, f[1], uint64(MaxEpoch))
	}
	return e, nil
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
	if min > MaxEpoch {
		return s.epoch, fmt.Errorf("token epoch %d exceeds %d", min, uint64(MaxEpoch))
	}
	if s.path != "" {
		if err := writeEpoch(s.path, min); err != nil {
			return s.epoch, err
		}
	}
	s.epoch = min
	return min, nil
}

func writeEpoch(path string, e uint64) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	_, werr := fmt.Fprintf(f, "epoch %d\n", e)
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
