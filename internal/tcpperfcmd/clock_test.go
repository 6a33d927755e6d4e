package tcpperfcmd

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/sleep/sleeptest"
	"github.com/wirespeed/wirespeed/internal/tcpperfenv"
)

// runOn runs the command as Run does, on clk. A fake clock moves only
// when the loops jump it to their next send (open loop) or the server
// moves it (clocked; closed loop), so a run holds the same messages
// however slow the machine is: none of these tests waits for something
// to happen within a span of real time. The drain waits a minute of real
// time without responses before it takes the server for a silent one: a
// guard against a hang, since every server here answers; so is the
// run's context's minute, after which the run stops, interrupted (exit
// status 1), where a closed loop's clock would never reach the end.
func runOn(clk *sleeptest.Clock, args []string, stdout, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return run(ctx, args, stdout, stderr, options{env: tcpperfenv.Env{Clock: clk, DrainQuiet: time.Minute}})
}

// clocked returns the address of a proxy to addr that moves clk on by a
// millisecond each time it passes on what it read from the server, as a
// server taking a millisecond for each answer would: a closed-loop run on
// clk ends once about -duration's worth of answers have come, whenever
// that is in real time. What it passes on is not changed (TLS records
// too).
func clocked(t *testing.T, clk *sleeptest.Clock, addr string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			wg.Add(2)
			go func() { // to the server, as it comes
				defer wg.Done()
				io.Copy(s, c)
				s.Close()
				c.Close()
			}()
			go func() { // to the client, a millisecond of clk for each read
				defer wg.Done()
				defer c.Close()
				b := make([]byte, 64<<10)
				for {
					n, err := s.Read(b)
					if n > 0 {
						clk.Advance(time.Millisecond)
						if _, err := c.Write(b[:n]); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}
