//go:build race

package dot

// The race detector slows the generic kernel down many times: the widest
// kernel tests sample their cases instead.
const raceEnabled = true
