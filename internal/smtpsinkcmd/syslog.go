package smtpsinkcmd

import "strings"

// syslogLine is the line Postfix's smtp-sink -s logs for a command line:
// the command as the client typed it, a space, then its arguments (what
// follows the blank after the command) with each byte that is not
// printable ASCII as '?', to 100 bytes.
func syslogLine(line string) string {
	s := strings.TrimLeft(line, " \t")
	cmd, args := s, ""
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		cmd, args = s[:i], s[i+1:]
	}
	b := make([]byte, 0, len(cmd)+1+min(len(args), 100))
	b = append(b, cmd...)
	b = append(b, ' ')
	for i := 0; i < len(args) && i < 100; i++ {
		c := args[i]
		if c < ' ' || c > '~' {
			c = '?'
		}
		b = append(b, c)
	}
	return string(b)
}

// syslogVerb is the command of a line as -s names it, in upper case.
func syslogVerb(line string) string {
	s := strings.TrimLeft(line, " \t")
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		s = s[:i]
	}
	return strings.ToUpper(s)
}
