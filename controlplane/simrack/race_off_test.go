//go:build !race

package simrack

const raceEnabled = false
