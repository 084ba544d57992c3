//go:build !race

package rwmodel

const raceEnabled = false
