package netio

// Exported for testing only.

// Wake makes every loop of s go round once, reading its clock, as if
// something had arrived; it reports the loops that could not be woken.
func (s *Loops) Wake() (errs []error) {
	for _, l := range s.loops {
		if err := l.post(task{lf: func(*loop) {}}); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Sync waits until every loop of s has gone round once more after a
// post, so that it has looked at its clock and its timeouts since.
func (s *Loops) Sync() {
	for _, l := range s.loops {
		done := make(chan struct{})
		err := l.post(task{lf: func(l *loop) {
			if l == nil || l.post(task{lf: func(*loop) { close(done) }}) != nil {
				close(done)
			}
		}})
		if err != nil {
			close(done)
		}
		<-done
	}
}
