package bench

import (
	"os/exec"
	"syscall"
	"testing"
)

// TestPeakRSSIsTheChilds: a server's peak RSS is its own, not that of the
// process that started it, which Linux's rusage of a child includes.
func TestPeakRSSIsTheChilds(t *testing.T) {
	big := make([]byte, 256<<20)
	for i := range big {
		if i%4096 == 0 {
			big[i] = 1
		}
	}
	cmd := exec.Command("cat")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// An echo from cat: it runs its own image now.
	in.Write([]byte("x"))
	if _, err := out.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	peak, ok := peakRSS(cmd.Process.Pid)
	in.Close()
	cmd.Wait()
	if !ok {
		t.Fatal("no VmHWM for a running child")
	}
	if peak < 0.1 || peak > 64 {
		t.Errorf("cat's peak RSS read %.1f MB while this process holds 256 MB", peak)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		t.Logf("peakRSS %.1f MB, the child's rusage %.1f MB", peak, float64(ru.Maxrss)/1024)
	}
	big[0] = 2 // keep it alive until here
}
