package serve

import "syscall"

// childAttr has the comparison engine's process get SIGTERM if serve dies
// without stopping it (killed), so that no orphan keeps the address.
// (Linux sends it when the thread that started the child ends: serve's
// threads end only with the process, as it locks none to a goroutine.)
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
