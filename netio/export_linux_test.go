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
