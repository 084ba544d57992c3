//go:build !race

package rackmodel

const raceEnabled = false
