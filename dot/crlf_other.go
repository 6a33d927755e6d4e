//go:build !amd64 || purego

package dot

// cleanBlocks advances s over a prefix of b that is clean (see Clean):
// whole words, with the generic kernel.
func (s *LineState) cleanBlocks(b []byte, maxLine int) int { return s.cleanWords(b, maxLine) }
