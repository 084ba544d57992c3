package rackmodel

import "github.com/netlock-go/netlock/controlplane/ctlcore"

// TestingKnobs break the rack on purpose (Config.TestingKnobs): each field is one negative
// control, and a test that sets it must see the online checker, history.Check or the
// conservation check fail. Never set them otherwise.
type TestingKnobs struct {
	// Program replaces p4/netlock.p4 (a mutant of it: the data plane breaks a rule); in a
	// NetChain rack (Config.NetChain), p4/netchain/netchain.p4.
	Program []byte
	// Mutation runs the controllers' cores with one rule broken (ctlcore.TestingKnobs.Mutation): e.g.
	// MutationSkipTokenBase moves locks into the switch without raising its grant counter above
	// their server's tokens (fencing tokens go backwards), MutationSkipRecoveryWait hands a
	// restarted switch's locks back to their servers without waiting out the leases.
	Mutation ctlcore.Mutation
	// DropGrant, if > 0, drops the DropGrant-th grant the switch makes (counted from 1): an
	// answer lost on the way.
	DropGrant uint64
	// NoTakeoverGrace sends a standby its takeover (wire.AdminTakeover) with no grace: it grants
	// at once instead of waiting out the leases the failed server may have granted.
	NoTakeoverGrace bool
}
