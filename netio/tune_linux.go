package netio

import "golang.org/x/sys/unix"

const notSentLowat = unix.TCP_NOTSENT_LOWAT
