//go:build !race

package vrack

const raceEnabled = false
