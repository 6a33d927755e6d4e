package latrec

import "io"

// A LogWriter is the writer of a run's interval log (tcpperf's and
// smtpsource's Config.HdrLog): it keeps the first error writing to W (a
// short write without one is io.ErrShortWrite) and writes nothing to W
// after it, so that the run can report the log cut short rather than go
// on writing to a writer that failed. Its Write returns that error too.
// It is written by one goroutine.
type LogWriter struct {
	W   io.Writer
	Err error // the first error writing W
}

func (l *LogWriter) Write(p []byte) (int, error) {
	if l.Err != nil {
		return 0, l.Err
	}
	n, err := l.W.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	l.Err = err
	return n, err
}
