//go:build !race

package dataplane

// raceDetector: see race_on_test.go.
const raceDetector = false
