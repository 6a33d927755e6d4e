//go:build unix

package sumcmd

import (
	"os"
	"syscall"
)

// stdioBufferSize is the size of the buffer glibc gives a stream on the
// file fi: BUFSIZ (8192), or the file's st_blksize if that is smaller.
// A pipe's is the page size: 4096 on most Linux systems.
func stdioBufferSize(fi os.FileInfo) int {
	const bufsiz = 8192
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Blksize > 0 && st.Blksize < bufsiz {
		return int(st.Blksize)
	}
	return bufsiz
}
