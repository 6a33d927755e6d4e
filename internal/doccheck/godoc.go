package doccheck

import (
	"regexp"
	"strings"
)

// symbolRE matches the first line of a symbol in the output of go doc for
// a package.
var symbolRE = regexp.MustCompile(`^(func|type|var|const) `)

// HeaderLines returns how many lines the output of `go doc PKG` has
// before its first symbol: the package clause and the package's doc.
func HeaderLines(goDoc string) int {
	lines := strings.Split(strings.TrimRight(goDoc, "\n"), "\n")
	for i, l := range lines {
		if symbolRE.MatchString(l) {
			return i
		}
	}
	return len(lines)
}
