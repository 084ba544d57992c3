//go:build race

package simrack

// raceEnabled: the race detector is on. The simulation runs in one goroutine, so the detector
// only slows it down: the randomized tests run one seed and the negative controls are left to
// make test's pass without the detector.
const raceEnabled = true
