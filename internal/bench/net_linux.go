package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

const canPin = true

// cpuAllowed reports whether this process may run on cpu (its affinity
// mask has it), and the mask's CPUs for an error.
func cpuAllowed(cpu int) (bool, string) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return true, "" // startPinned will say
	}
	var cpus []string
	for c := range 8 * int(unsafe.Sizeof(set)) {
		if set.IsSet(c) {
			cpus = append(cpus, strconv.Itoa(c))
		}
	}
	return cpu < 8*int(unsafe.Sizeof(set)) && set.IsSet(cpu), strings.Join(cpus, ",")
}

// startPinned starts cmd with its CPU affinity set to cpu (if cpu >= 0): the
// starting thread pins itself, forks (the child inherits the mask, so every
// thread of a Go child sees one CPU and sets GOMAXPROCS to 1) and restores
// its own mask.
func startPinned(cmd *exec.Cmd, cpu int) error {
	if cpu < 0 {
		return cmd.Start()
	}
	runtime.LockOSThread()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	err := cmd.Start()
	if rerr := unix.SchedSetaffinity(0, &old); rerr != nil {
		// Leave the thread locked: it dies with this goroutine's lock
		// rather than running other goroutines on one CPU.
		return rerr
	}
	runtime.UnlockOSThread()
	return err
}

// listeningPorts returns the ports of the TCP sockets process pid listens
// on, from its descriptors and /proc/PID/net/tcp{,6}: the way to learn the
// port a child bound with port 0 when it does not print it (sockperf).
func listeningPorts(pid int) ([]int, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, e := range ents {
		link, err := os.Readlink(filepath.Join(dir, e.Name()))
		if ino, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(ino, "]")] = true
		}
	}
	var ports []int
	for _, table := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			return nil, err
		}
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			const listen = "0A"
			if len(f) < 10 || f[3] != listen || !inodes[f[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(f[1], ":")
			port, err := strconv.ParseUint(hexPort, 16, 16)
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %v", table, line, err)
			}
			ports = append(ports, int(port))
		}
	}
	return ports, nil
}

// peakRSS is process pid's peak resident set in MB (VmHWM in
// /proc/PID/status), counted from its exec.
func peakRSS(pid int) (float64, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024, err == nil
		}
	}
	return 0, false
}
