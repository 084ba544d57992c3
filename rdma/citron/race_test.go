//go:build race

package citron

// raceEnabled: the schedule explorer runs one goroutine at a time (the race detector has nothing
// to find there) and is about ten times slower under it; make test runs it without.
const raceEnabled = true
