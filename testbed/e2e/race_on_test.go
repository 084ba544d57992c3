//go:build race

package e2e

// raceEnabled: the race detector is on (TestSoakThroughSwitch then skips; make test runs it
// without the detector).
const raceEnabled = true
