package rackmodel

// Fault breaks the rack on purpose. Each field is one negative control: a test runs the rack
// with it and must see the checker, the conservation check or history.Check fail.
type Fault struct {
	// Program replaces p4/netlock.p4 (a mutant of it: the data plane breaks a rule).
	Program []byte
	// NoTokenBase moves locks into the switch without raising the switch's grant counter above
	// the tokens their server granted (Allocate skips AdminSwitchTokenBase): fencing tokens go
	// backwards.
	NoTokenBase bool
	// DropGrant, if > 0, drops the DropGrant-th grant the switch sends to a client (counted
	// from 1): an answer lost on the way.
	DropGrant uint64
	// NoLeaseWait lets a lock server that takes over a failed server's locks grant at once,
	// instead of waiting out the leases the failed server may have granted.
	NoLeaseWait bool
	// NoRecoveryWait lets the controller hand the locks of a restarted switch back to their
	// servers as soon as it has re-programmed the switch, instead of waiting out the leases the
	// lost switch may have granted.
	NoRecoveryWait bool
}
