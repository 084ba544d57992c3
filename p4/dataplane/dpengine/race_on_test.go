//go:build race

package dpengine

// raceDetector: the randomized tests run a few of their sequences under the race detector
// (the engine is single-threaded: nothing there to race); make test runs the full counts
// without it.
const raceDetector = true
