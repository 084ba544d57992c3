//go:build race

package dataplane

// raceEnabled shrinks the randomized tests under the race detector (they run no goroutines;
// the full counts run without it).
const raceEnabled = true
