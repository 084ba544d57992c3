package client

import (
	"crypto/sha256"
	"encoding/binary"
)

// LockID maps a lock name (as etcd, Consul and Redis locks name them: "orders/42") to a lock id.
// The mapping is fixed forever, the same in every version and every language: the first four
// bytes of the name's SHA-256, read big-endian; a value in the control plane's reserved range
// (0xFFFFFF00 and up, [ErrReservedLock]) is lowered by 0x100, so LockID never returns a reserved
// id. In Python: int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big"), minus 0x100
// if at least 0xFFFFFF00. TestLockIDVectors pins it.
//
// Two names may map to one id (a collision). They then share one lock: exclusion still holds for
// each name (a holder of one excludes holders of the other), so a collision is safe, but unrelated
// work serializes on it, and a holder that takes the second name in another transaction while it
// holds the first waits for itself until its lease ends; take such names in one [Txn] (the Txn
// merges equal ids). Two given names collide with probability 2^-32; among n names some pair
// collides with probability about 1 - exp(-n²/2^33): 1.2e-4 for a thousand names, 1.2% for ten
// thousand, 50% near 77 000. Where names must never share a lock, assign ids yourself (a table
// of name to id) instead. SHA-256 cut to 32 bits does not keep anyone from finding two names
// that collide (about 2^16 tries): do not let untrusted parties choose the names of locks that
// others must be able to take.
func LockID(name string) uint32 {
	sum := sha256.Sum256([]byte(name))
	id := binary.BigEndian.Uint32(sum[:4])
	if id >= lockIDReservedBase {
		id -= 0x100
	}
	return id
}

// lockIDReservedBase is wire.ReservedLockBase written out: LockID's mapping must not change if the
// reserved range ever does (TestLockIDAvoidsReserved fails if the range grows past it).
const lockIDReservedBase = 0xFFFFFF00
