//go:build !race

package re

const raceEnabled = false
