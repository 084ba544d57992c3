//go:build race

package rwmodel

// raceEnabled: the race detector slows the (single-goroutine) exploration about tenfold
// without checking anything more, so the largest configurations are skipped under it.
const raceEnabled = true
