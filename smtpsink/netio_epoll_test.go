//go:build linux && !netio_portable

package smtpsink

// netioPortable: the loops engine runs on netio's epoll Serve.
const netioPortable = false
