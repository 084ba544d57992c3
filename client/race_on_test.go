//go:build race

package client_test

// raceEnabled: the race detector is on; sync.Pool then drops items at random and allocation
// counts are meaningless.
const raceEnabled = true
