//go:build race

package cli

// raceEnabled: this test binary runs with the race detector, and every
// process of it is several times slower to start and run.
const raceEnabled = true
