package dataplane

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// ParseLockEntry reads a TableLock entry back (a controller that takes over reads the lock table):
// the match key, the action's name (full or suffix) and its data, as LockEntry.Match and
// LockEntry.Action render them (big-endian; leading zero bytes may be missing, as P4Runtime's
// canonical byte strings drop them).
func ParseLockEntry(match []byte, action string, args [][]byte) (LockEntry, error) {
	var e LockEntry
	is := func(full string) bool { return action == full || strings.HasSuffix(full, "."+action) }
	switch {
	case is(ActionLockHit):
	case is(ActionLockPause):
		e.Paused = true
	default:
		return e, fmt.Errorf("dataplane: lock entry with action %q", action)
	}
	if len(args) != len(ParamsLockHit) {
		return e, fmt.Errorf("dataplane: lock entry with %d parameters, want %d", len(args), len(ParamsLockHit))
	}
	widths := []int{4, 4, 2, 4, 2, 2}
	vals := make([]uint64, len(args))
	for i, a := range args {
		if len(a) > widths[i] {
			return e, fmt.Errorf("dataplane: lock entry parameter %s: %d bytes, want at most %d", ParamsLockHit[i], len(a), widths[i])
		}
		vals[i] = beUint(a)
	}
	if len(match) > 4 {
		return e, fmt.Errorf("dataplane: lock entry key of %d bytes", len(match))
	}
	e.Lock = uint32(beUint(match))
	e.Index = uint32(vals[0])
	e.Regions[0] = Region{Left: uint32(vals[1]), Size: uint16(vals[2])}
	e.Regions[1] = Region{Left: uint32(vals[3]), Size: uint16(vals[4])}
	e.Server = uint16(vals[5])
	return e, nil
}

func beUint(b []byte) uint64 {
	var x [8]byte
	copy(x[8-len(b):], b)
	return binary.BigEndian.Uint64(x[:])
}
