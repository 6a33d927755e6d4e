//go:build !linux || netio_portable

package smtpsink

// netioPortable: the loops engine runs on netio's portable Serve, whose
// connections hold goroutines and a read buffer of their own.
const netioPortable = true
