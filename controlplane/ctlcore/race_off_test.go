//go:build !race

package ctlcore

const raceEnabled = false
