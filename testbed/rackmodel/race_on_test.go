//go:build race

package rackmodel

// raceEnabled shrinks the randomized tests under the race detector: the model runs no
// goroutines, so the detector has nothing to find and only slows the engine tenfold.
const raceEnabled = true
