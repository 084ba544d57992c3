//go:build !race

package dpengine

// raceDetector: see race_on_test.go.
const raceDetector = false
