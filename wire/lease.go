package wire

import "time"

// Leases and clocks (docs/protocol.md, "Leases and clocks"). A lease is measured by each side on
// its own monotonic clock (package internal/clock), from its own instant: the holder from when it
// sent the acquire or renewal, the server (or the switch) from when it granted or renewed. The
// holder's instant comes first, so the holder's lease ends no later than the granter's, provided
// that the two clocks run at nearly the same rate; HolderLease takes the rest off.

// MaxClockDriftPPM bounds how far any clock of the rack may run fast or slow, in parts per
// million: a crystal oscillator is within about 100 ppm, and NTP never slews a clock by more than
// 500 ppm.
const MaxClockDriftPPM = 500

// HolderLease returns how long the holder of a lease of length lease may consider it held,
// counted on its own monotonic clock from its send instant: lease less twice the largest drift.
//
// Why twice: let the holder's clock run slow by up to ρ and the granter's fast by up to ρ. The
// holder's lease then ends at most HolderLease/(1-ρ) of real time after its send, the granter's
// at least lease/(1+ρ) after its grant, which comes later; with HolderLease = lease(1-2ρ),
// (1-2ρ)(1+ρ) = 1-ρ-2ρ² <= 1-ρ, so the holder's end never passes the granter's. The same holds
// for a restarted server that waits out the longest lease it granted before its crash
// (lockserver's restart grace): it waits lease on its clock from its start, after the crash.
// The margin is rounded up to the nanosecond.
func HolderLease(lease time.Duration) time.Duration {
	q, r := lease/1_000_000, lease%1_000_000
	return lease - q*2*MaxClockDriftPPM - (r*2*MaxClockDriftPPM+999_999)/1_000_000
}
