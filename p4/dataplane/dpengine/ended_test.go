package dpengine

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// The table of requests seen (`ended`, docs/dataplane.md "Register layout") must tell two
// requests of one lock apart when they share a cell. Its fingerprint was a CRC-32 of (txn,
// lock), its cell a CRC-32 of (lock, txn) modulo the size: for one lock the first is an
// invertible linear function of the second (a CRC is linear and the two messages are
// rotations of each other), so two txns whose CRC-32 of (lock, txn) are equal shared cell and
// fingerprint whatever the table size, and a live request was taken for one that had ended
// (ignored, like its retransmissions: testbed/softrack's TestHotLocksIntoTheSwitch lost
// acquisitions that way, 1 run in 7).

// indexCollisions returns n pairs of distinct txns whose CRC-32 of (lock, txn), the hash the
// programs index `ended` with, are equal (a birthday search over random txns).
func indexCollisions(rng *rand.Rand, lock uint32, n int) [][2]uint64 {
	var b [12]byte
	binary.BigEndian.PutUint32(b[:4], lock)
	seen := make(map[uint32]uint64, 1<<17)
	var out [][2]uint64
	for len(out) < n {
		txn := rng.Uint64()
		if txn == 0 {
			continue
		}
		binary.BigEndian.PutUint64(b[4:], txn)
		h := crc32.ChecksumIEEE(b[:])
		if prev, ok := seen[h]; ok && prev != txn {
			out = append(out, [2]uint64{prev, txn})
			delete(seen, h)
			continue
		}
		seen[h] = txn
	}
	return out
}

// endedPairsFail runs, on a switch loading src (prog's source when nil), every pair's first
// request (acquire, grant, release) and then its second, which must be granted; it returns what
// went wrong, or "".
func endedPairsFail(t *testing.T, prog dataplane.Program, src []byte, pl engine.Pipeline, lock uint32, pairs [][2]uint64) string {
	r := newRigSource(t, prog, dataplane.Sizing{Locks: 8, PartBits: 6}, src, pl)
	must(t, r.sw.SetLock(dataplane.LockEntry{Lock: lock, Index: 1, Server: 1,
		Regions: [dataplane.Levels]dataplane.Region{{Left: 0, Size: 4}, {Left: 4, Size: 4}}}))
	c := clientAddr(1)
	s := serverAddr(1)
	ts := uint64(100)
	for _, p := range pairs {
		for i, txn := range p {
			ts++
			acq := wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: lock, Txn: txn, Timestamp: ts}
			outs := r.send(1, c, s, &acq, nil)
			if len(outs) != 1 || outs[0].F.Op != wire.OpGrant || outs[0].F.Txn != txn {
				return fmt.Sprintf("acquire of txn %#x (request %d of a pair sharing the index hash): %s", txn, i+1, describeOuts(outs))
			}
			ts++
			rel := wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive, Lock: lock, Txn: txn, Token: outs[0].F.Token, Timestamp: ts}
			outs = r.send(1, c, s, &rel, nil)
			if len(outs) != 1 || outs[0].F.Op != wire.OpRelease {
				return fmt.Sprintf("release of txn %#x: %s", txn, describeOuts(outs))
			}
		}
	}
	return ""
}

func describeOuts(outs []out) string {
	if len(outs) == 0 {
		return "no answer"
	}
	var b strings.Builder
	for i, o := range outs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(o.String())
	}
	return b.String()
}

// endedIndex is each program's field list of the ended table's index hash (the TNA program's
// txn in halves: the same bits).
var endedIndex = map[string]string{
	dataplane.V1Model.Name: "{hdr.nl.lock, hdr.nl.txn}",
	dataplane.TNA.Name:     "{hdr.nl.lock, hdr.nl.txn_hi, hdr.nl.txn_lo}",
}

// endedMutants restore the old fingerprint, a CRC-32 of (txn, lock): the test must catch them.
var endedMutants = map[string][2]string{
	dataplane.V1Model.Name: {"{hdr.nl.txn[31:0], hdr.nl.lock, hdr.nl.txn[63:32]}", "{hdr.nl.txn, hdr.nl.lock}"},
	dataplane.TNA.Name:     {"{hdr.nl.txn_lo, hdr.nl.lock, hdr.nl.txn_hi}", "{hdr.nl.txn_hi, hdr.nl.txn_lo, hdr.nl.lock}"},
}

// TestEndedTellsRequestsApart: pairs of txns of one lock sharing the full index hash (so a cell
// at any table size) are each granted, the second after the first ended, in both programs; and
// the programs with the old fingerprint fail on the same pairs (the negative control).
func TestEndedTellsRequestsApart(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = rand.Uint64()
	}
	rng := rand.New(rand.NewPCG(seed, 0x656e646564))
	lock := uint32(rng.IntN(1 << 20))
	pairs := indexCollisions(rng, lock, 6)
	// The pair testbed/softrack met (p4/testdata/scenarios/ended.scn has it too).
	pairs = append(pairs, [2]uint64{0x8adce6212506b403, 0x5b09d3a3b80f99b7})
	for _, run := range pipelineRuns {
		prog := run.prog
		t.Run(run.name, func(t *testing.T) {
			if msg := endedPairsFail(t, prog, nil, run.pl, lock, pairs[:len(pairs)-1]); msg != "" {
				t.Errorf("lock %d: %s (re-run: -seed=%d)", lock, msg, seed)
			}
			if msg := endedPairsFail(t, prog, nil, run.pl, 102, pairs[len(pairs)-1:]); msg != "" {
				t.Errorf("lock 102: %s", msg)
			}
			if run.pl == engine.PipelineGenerated {
				return // the mutants run on the interpreter (a changed program has no generated pipeline)
			}
			m := endedMutants[prog.Name]
			src := mutate(t, prog, m[0], m[1])
			if msg := endedPairsFail(t, prog, src, engine.PipelineInterpreted, lock, pairs[:len(pairs)-1]); msg == "" {
				t.Errorf("the program with the old fingerprint (CRC-32 of (txn, lock)) passed (seed %d)", seed)
			} else {
				t.Logf("the old fingerprint, caught: %s", msg)
			}
		})
	}
}

// TestEndedHashIndependent: for one lock, the cell's hash and the fingerprint are independent
// linear functions of the txn: the 64 x 64 matrix over GF(2) mapping a txn difference to the
// differences of (CRC-32 of (lock, txn), CRC-32 of (txn[31:0], lock, txn[63:32])) has full rank,
// so the pair determines the txn, and a cell's 16 bits and the fingerprint's 30 are 46
// independent bits (the old fingerprint's matrix had rank 32: nothing beyond the index hash).
// The field lists are the programs' own (checked against their source); p4/testdata/scenarios/
// ended.scn checks the cells and values these formulas give against both programs' registers.
func TestEndedHashIndependent(t *testing.T) {
	for _, prog := range dataplane.Programs {
		if !strings.Contains(string(prog.Source), endedIndex[prog.Name]) ||
			!strings.Contains(string(prog.Source), endedMutants[prog.Name][0]) {
			t.Fatalf("p4/%s: the ended table's field lists changed: update this test", prog.File)
		}
	}
	index := func(lock uint32, txn uint64) uint32 {
		var b [12]byte
		binary.BigEndian.PutUint32(b[:4], lock)
		binary.BigEndian.PutUint64(b[4:], txn)
		return crc32.ChecksumIEEE(b[:])
	}
	fpNew := func(lock uint32, txn uint64) uint32 {
		var b [12]byte
		binary.BigEndian.PutUint32(b[:4], uint32(txn))
		binary.BigEndian.PutUint32(b[4:8], lock)
		binary.BigEndian.PutUint32(b[8:], uint32(txn>>32))
		return crc32.ChecksumIEEE(b[:])
	}
	fpOld := func(lock uint32, txn uint64) uint32 {
		var b [12]byte
		binary.BigEndian.PutUint64(b[:8], txn)
		binary.BigEndian.PutUint32(b[8:], lock)
		return crc32.ChecksumIEEE(b[:])
	}
	rank := func(lock uint32, fp func(uint32, uint64) uint32, idxMask, fpMask uint32) int {
		z := uint64(index(lock, 0)&idxMask)<<32 | uint64(fp(lock, 0)&fpMask)
		basis := map[int]uint64{}
		for bit := range 64 {
			v := (uint64(index(lock, 1<<bit)&idxMask)<<32 | uint64(fp(lock, 1<<bit)&fpMask)) ^ z
			for v != 0 {
				hb := 63
				for v>>hb == 0 {
					hb--
				}
				if b, ok := basis[hb]; ok {
					v ^= b
					continue
				}
				basis[hb] = v
				break
			}
		}
		return len(basis)
	}
	for _, lock := range []uint32{0, 7, 102, 1<<32 - 1} {
		if got := rank(lock, fpNew, ^uint32(0), ^uint32(0)); got != 64 {
			t.Errorf("lock %d: rank of (index hash, fingerprint) = %d, want 64", lock, got)
		}
		if got := rank(lock, fpNew, 0xffff, 0xfffffffc); got != 46 {
			t.Errorf("lock %d: rank of (16-bit cell, 30-bit fingerprint) = %d, want 46", lock, got)
		}
		// The negative control: the old fingerprint adds nothing to the index hash.
		if got := rank(lock, fpOld, ^uint32(0), ^uint32(0)); got != 32 {
			t.Errorf("lock %d: old fingerprint: rank = %d, want 32 (the defect this test is about)", lock, got)
		}
	}
}
