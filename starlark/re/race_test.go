//go:build race

package re

// raceEnabled: under the race detector sync.Pool keeps nothing, so Go's
// regexp allocates a machine per match and allocation counts mean little.
const raceEnabled = true
