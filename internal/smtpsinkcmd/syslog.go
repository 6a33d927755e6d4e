package smtpsinkcmd

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/wirespeed/wirespeed/internal/cli"
)

// checkSyslogAddr checks -syslog's value, NETWORK:ADDRESS, before
// anything is dialled: a network that log/syslog dials (unixgram and
// unix with a socket's path, udp and tcp with HOST:PORT and a port other
// than 0) and an address that net can split. Its error is the command
// line's.
func checkSyslogAddr(addr string) error {
	network, raddr, ok := strings.Cut(addr, ":")
	if !ok || network == "" || raddr == "" {
		return errors.New("want NETWORK:ADDRESS, such as unixgram:/dev/log or udp:127.0.0.1:514")
	}
	switch network {
	case "unixgram", "unix":
		return nil
	case "udp", "udp4", "udp6", "tcp", "tcp4", "tcp6":
		if err := cli.CheckHostPort(raddr); err != nil {
			return err
		}
		_, port, _ := net.SplitHostPort(raddr)
		if port == "" {
			return fmt.Errorf("%q names no port (syslog's is 514)", raddr)
		}
		if p, err := net.LookupPort(network, port); err == nil && p == 0 {
			// No server is there: over UDP every line would be
			// lost without a word.
			return fmt.Errorf("port %s: no syslog listens there (syslog's is 514)", port)
		}
		return nil
	}
	return fmt.Errorf("unknown network %q (unixgram, unix, udp, tcp)", network)
}

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
