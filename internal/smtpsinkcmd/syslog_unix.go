//go:build !windows && !plan9

package smtpsinkcmd

import (
	"fmt"
	"io"
	"log/syslog"
	"strings"
)

// openSyslog connects to the system's syslog (addr empty: /dev/log or its
// like) or to addr, NETWORK:ADDRESS (unixgram:/dev/log, udp:host:514,
// tcp:host:514), as smtp-sink with facility mail and level info.
func openSyslog(addr string) (io.WriteCloser, error) {
	network, raddr := "", ""
	if addr != "" {
		var ok bool
		if network, raddr, ok = strings.Cut(addr, ":"); !ok || raddr == "" {
			return nil, fmt.Errorf("-syslog %q: want NETWORK:ADDRESS, such as unixgram:/dev/log or udp:127.0.0.1:514", addr)
		}
	}
	return syslog.Dial(network, raddr, syslog.LOG_MAIL|syslog.LOG_INFO, "smtp-sink")
}
