//go:build !unix

package sumcmd

import "os"

// stdioBufferSize is the size of a C stdio stream's buffer: BUFSIZ.
func stdioBufferSize(os.FileInfo) int { return 8192 }
