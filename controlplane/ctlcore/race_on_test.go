//go:build race

package ctlcore

// raceEnabled shrinks the randomized rack tests under the race detector: the racks run no
// goroutines, so the detector has nothing to find and only slows the P4 engine tenfold.
const raceEnabled = true
