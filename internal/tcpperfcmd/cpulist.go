package tcpperfcmd

import (
	"fmt"
	"strconv"
	"strings"
)

// maxCPUList bounds a CPU list's length, ranges expanded: one range of
// 4096 was bounded, but not how many ranges ("0-4095," repeated over a
// command line of 2 MB asked for 10 GB of them).
const maxCPUList = 4096

// parseCPUList parses a CPU list in the format of taskset -c and
// /sys/devices/system/cpu/online: "1", "0,2", "4-7,9".
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b-a >= maxCPUList || len(cpus)+b-a >= maxCPUList {
			return nil, fmt.Errorf("bad CPU list %q", s)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
