package wire

// Fencing tokens are epoch-major: token = epoch<<EpochShift + n, where n counts the grants of one
// lock server shard within the epoch. A lock server persists its epoch and moves to a later one
// before it grants anything after a start, so its tokens grow across restarts whatever its clock
// says; a server that takes over another's locks starts above the other's epoch; the switch's
// tokens for a lock it took from a server start at that server's next epoch (docs/protocol.md,
// "Fencing tokens").
const (
	// EpochShift is the number of low token bits that count grants within an epoch.
	EpochShift = 40
	// MaxEpoch is the largest epoch: the epoch has the 24 high bits of a token.
	MaxEpoch = 1<<(64-EpochShift) - 1
	// EpochRefill is how far into an epoch a shard may count before its server moves every
	// shard to the next epoch (half the range: ample time to persist the move).
	EpochRefill = 1 << (EpochShift - 1)
)

// EpochBase returns the first token value of epoch e (the first grant of the epoch gets one more).
func EpochBase(e uint64) uint64 { return e << EpochShift }

// EpochOf returns the epoch of token t.
func EpochOf(t uint64) uint64 { return t >> EpochShift }
