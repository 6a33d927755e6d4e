//go:build unix

package smtpsinkcmd

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"
	"time"
)

// dropPrivileges does what Postfix's smtp-sink -R and -u do once the
// sockets are open: change the root directory to root (and the working
// directory to it), then take name's user and group IDs (real, effective
// and saved; on Linux for every thread, as Go's syscall package does)
// and its groups. Either may be empty.
func dropPrivileges(root, name string) error {
	var uid, gid int
	var groups []int
	if name != "" {
		// Looked up before the root changes: /etc is not in the new one.
		u, err := user.Lookup(name)
		if err != nil {
			return fmt.Errorf("-u: %w", err)
		}
		if uid, err = strconv.Atoi(u.Uid); err == nil {
			gid, err = strconv.Atoi(u.Gid)
		}
		if err != nil {
			return fmt.Errorf("-u %s: IDs %s:%s: %w", name, u.Uid, u.Gid, err)
		}
		ids, err := u.GroupIds()
		if err != nil {
			return fmt.Errorf("-u %s: groups: %w", name, err)
		}
		groups = []int{gid}
		for _, g := range ids {
			if n, err := strconv.Atoi(g); err == nil && n != gid {
				groups = append(groups, n)
			}
		}
	}
	if root != "" {
		time.Now().Zone() // the time zone, loaded from /etc now (dumps are dated in it)
		if err := syscall.Chroot(root); err != nil {
			return fmt.Errorf("-R: chroot %s: %w", root, err)
		}
		if err := os.Chdir("/"); err != nil {
			return fmt.Errorf("-R: %w", err)
		}
	}
	if name == "" {
		return nil
	}
	if err := syscall.Setgroups(groups); err != nil {
		return fmt.Errorf("-u %s: setgroups: %w", name, err)
	}
	if err := syscall.Setgid(gid); err != nil {
		return fmt.Errorf("-u %s: setgid: %w", name, err)
	}
	if err := syscall.Setuid(uid); err != nil {
		return fmt.Errorf("-u %s: setuid: %w", name, err)
	}
	return nil
}
