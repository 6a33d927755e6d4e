package smtpsink

// chunkState is a BDAT message in progress.
type chunkState struct{}

func (ss *session) bdatCmd(arg string) bool {
	ss.reply(502, "5.5.1 Error: BDAT not implemented yet")
	return true
}
