//go:build !unix && !windows && !plan9

package unixsock

// sunPath is the size of a socket address's path: unknown here.
const sunPath = 0
