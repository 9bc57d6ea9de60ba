//go:build race

package starlark

// raceEnabled: the race detector makes everything several times slower,
// so work meant to outlast a deadline can be smaller.
const raceEnabled = true
