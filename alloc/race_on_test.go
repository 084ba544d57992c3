//go:build race

package alloc

// raceEnabled shrinks the randomized tests under the race detector (they run no goroutines; the
// full counts run without it, as the package doc's figures say).
const raceEnabled = true
