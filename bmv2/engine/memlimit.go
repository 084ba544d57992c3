package engine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/netlock-go/netlock/bmv2/front"
)

// ErrMemoryLimit is wrapped by the error of Load when the program's state would need more memory
// than Config.MemoryLimit, and by the error of Table.Insert when one more entry would.
var ErrMemoryLimit = errors.New("engine: memory limit exceeded")

// DefaultMemoryFraction is the fraction of the machine's memory that Config.MemoryLimit's zero
// value gives a switch: one part in DefaultMemoryFraction.
const DefaultMemoryFraction = 4

// fallbackMemory is taken as the machine's memory where it cannot be read (not Linux).
const fallbackMemory = 4 << 30

// DefaultMemoryLimit is the memory limit of a switch whose Config.MemoryLimit is 0: a quarter
// (1/DefaultMemoryFraction) of the machine's memory, which is the smaller of the physical memory
// (/proc/meminfo's MemTotal) and the memory limit of the process's cgroup (cgroup v2's
// memory.max), or 4 GiB where neither can be read.
func DefaultMemoryLimit() int64 {
	return MachineMemory() / DefaultMemoryFraction
}

// MachineMemory returns the memory the process may use, in bytes: the smaller of /proc/meminfo's
// MemTotal and the cgroup's memory.max, 4 GiB where neither can be read.
func MachineMemory() int64 {
	m := int64(0)
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		m = memTotal(b)
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 && (m == 0 || v < m) {
			m = v // "max" (no limit) does not parse and is skipped
		}
	}
	if m <= 0 {
		return fallbackMemory
	}
	return m
}

// ParseMemoryLimit reads a memory limit as netlock switch's --memory-limit takes it, for a machine
// of machine bytes (MachineMemory): "N%" is that share of the machine (1-100, truncated to whole
// bytes), "N" bytes, "N" followed by KiB, MiB, GiB or TiB (powers of 1024) or kB, MB, GB, TB
// (powers of 1000), and "none" no limit (-1, Config.MemoryLimit's negative value). The result is
// at least 1 byte, or -1.
func ParseMemoryLimit(s string, machine int64) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "none" {
		return -1, nil
	}
	if p, ok := strings.CutSuffix(t, "%"); ok {
		pct, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(pct > 0 && pct <= 100) {
			return 0, fmt.Errorf("memory limit %q: want a share of the machine's memory in (0, 100]%%", s)
		}
		return max(int64(float64(machine)*pct/100), 1), nil
	}
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"kB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if v, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(v), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("memory limit %q: want N%%, none, or a positive number of bytes with an optional unit (KiB, MiB, GiB, TiB, kB, MB, GB, TB)", s)
	}
	return n * mult, nil
}

// memTotal returns /proc/meminfo's MemTotal in bytes, 0 when it has none.
func memTotal(meminfo []byte) int64 {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || kb <= 0 || kb > math.MaxInt64/1024 {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

// memBudget accounts the memory of a switch's state against its limit.
//
// Invariant: used <= limit whenever limit >= 0 (a negative limit is no limit); used is the sum of
// what reserve granted minus what release gave back.
type memBudget struct {
	limit, used int64
}

// reserve takes n bytes from the budget and reports whether they were within the limit (if not,
// nothing is taken).
func (m *memBudget) reserve(n int64) bool {
	if n < 0 {
		return false
	}
	if m.limit >= 0 && n > m.limit-m.used {
		return false
	}
	m.used += n
	return true
}

// release gives back n bytes that reserve took.
func (m *memBudget) release(n int64) { m.used -= n }

// MemoryUsed returns the bytes of the switch's state that count against Config.MemoryLimit: the
// cells of its registers, counters and meters, one packet's state, and its table entries (the
// engine's estimate of each, see Table.EntryBytes).
func (s *Switch) MemoryUsed() int64 { return s.mem.used }

// reserve takes n*each bytes for what (a phrase naming the object) from the switch's budget, or
// fails the compilation with an error that wraps ErrMemoryLimit, before anything is allocated.
func (cp *compiler) reserve(pos front.Pos, what string, n, each uint64) {
	hi, lo := bits.Mul64(n, each)
	if hi == 0 && lo <= math.MaxInt64 && cp.sw.mem.reserve(int64(lo)) {
		return
	}
	need := "more than 2^63 bytes"
	if hi == 0 {
		need = strconv.FormatUint(lo, 10) + " bytes"
	}
	prefix := ""
	if pos.Line > 0 {
		prefix = pos.String() + ": "
	}
	panic(compileError{fmt.Errorf("%s%s needs %s, more than the %d bytes left of the switch's memory limit (%d bytes): %w",
		prefix, what, need, cp.sw.mem.limit-cp.sw.mem.used, cp.sw.mem.limit, ErrMemoryLimit)})
}

// cellBytes is what one cell of a register of width bits takes: narrow storage for v1model
// registers (newRegister), 16 bytes otherwise.
func cellBytes(width int, narrow bool) uint64 {
	switch {
	case narrow && width <= 32:
		return 4
	case narrow && width <= 64:
		return 8
	}
	return uint64(unsafe.Sizeof(u128{}))
}

const (
	counterCellBytes = 16 // Packets and Bytes
	meterCellBytes   = uint64(unsafe.Sizeof(meterState{}))
	slotBytes        = 8
)

// EntryBytes is the engine's estimate of the memory one entry of the table takes, counted
// against Config.MemoryLimit: its match and action data as the engine keeps them (entry,
// fieldMatch, 128-bit arguments) and as the runtime API returns them (Entry: FieldMatch with
// value and mask bytes, argument bytes), for the action with the most parameters, and its
// direct meter's state.
func (t *Table) EntryBytes() int64 {
	n := int64(unsafe.Sizeof(entry{}))
	for _, k := range t.Keys {
		kb := int64((k.Width + 7) / 8)
		n += int64(unsafe.Sizeof(fieldMatch{})) + int64(unsafe.Sizeof(FieldMatch{})) + 2*kb
	}
	args := 0
	for _, a := range t.actions {
		w := 0
		for _, p := range a.Params {
			w += int(unsafe.Sizeof(u128{})) + int(unsafe.Sizeof([]byte{})) + (p.Width+7)/8
		}
		args = max(args, w)
	}
	if t.meter != nil && t.meter.direct {
		n += int64(meterCellBytes)
	}
	return n + int64(args)
}
