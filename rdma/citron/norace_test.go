//go:build !race

package citron

const raceEnabled = false
