package smtpsink

import (
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A fakeClock is the sessions' clock in a test.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// A clockConn keeps a session's read deadline by the fake clock: each
// read that returns data moves the clock on by perRead first (the time
// the data took to come), and a read that returns at or after the
// deadline fails as if the deadline had fired before the data came.
type clockConn struct {
	net.Conn
	clk     *fakeClock
	perRead atomic.Int64 // a time.Duration
	mu      sync.Mutex
	rd      time.Time
}

func (c *clockConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.rd = t
	c.mu.Unlock()
	return nil
}

func (c *clockConn) SetWriteDeadline(time.Time) error { return nil }

func (c *clockConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.clk.advance(time.Duration(c.perRead.Load()))
	}
	c.mu.Lock()
	rd := c.rd
	c.mu.Unlock()
	if !rd.IsZero() && !c.clk.now().Before(rd) {
		return 0, os.ErrDeadlineExceeded
	}
	return n, err
}

// A client that drips a byte a second is ended with 421: within Timeout
// in a command line, and in message data (DATA's or a BDAT chunk's) once
// the MinDataRate it earns (n/rate a byte) has run out, give or take the
// Timeout/64 the data's deadline is kept late. The clock is the test's:
// each byte comes a second after the sink began to wait for it.
var dripCases = []struct {
	name   string
	before string // sent at once first
	rate   int64
	want   int // bytes read, the last of them too late
}{
	{"command", "", 0, 5},                // 1..4 s in time; 5 s is the deadline
	{"DATA", "DATA\r\n", 0, 6},           // 5 s + 2 ms a byte: the 6th byte is late
	{"BDAT", "BDAT 100\r\n", 0, 6},       // the same for a chunk
	{"DATA at 2 B/s", "DATA\r\n", 2, 10}, // 0.5 s a byte: 5 + 0.5*8 = 9 s, and the 9th byte, at 9 s, in the Timeout/64 slack
	{"command at 2 B/s", "", 2, 5},       // no credit for commands
}

// The same on the loops engine, whose deadlines are netio's, on the same
// fake clock: each byte comes a second after the one before and is read
// and served on its own (the client sends the next once the sink has
// served the last; the loop then has either replied 421 or set a
// deadline that the clock has not reached).
func TestDripEndedLoops(t *testing.T) {
	for _, tc := range dripCases {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{t: time.Unix(1e9, 0)}
			var dripping atomic.Bool
			reads := make(chan struct{}, 1)
			cfg := Config{Engine: EngineLoops, Timeout: 5 * time.Second, MinDataRate: tc.rate}
			s := startSink(t, cfg, hooks{now: clk.now, read: func(int) {
				if dripping.Load() {
					reads <- struct{}{}
				}
			}})
			c := dial(t, s)
			if tc.before != "" {
				c.send("EHLO c\r\nMAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\n" + tc.before)
				want := "250 250 250"
				if strings.HasPrefix(tc.before, "DATA") {
					want += " 354"
				}
				if got := c.codes(strings.Count(want, " ") + 1); got != want {
					t.Fatalf("got %s", got)
				}
			}
			dripping.Store(true)
			replies := make(chan string, 1)
			go func() {
				l, _ := c.R.ReadString('\n')
				replies <- l
			}()
			n := 0
			last := ""
			for n < 100 && last == "" && s.Stats().Errors[421] == 0 {
				clk.advance(time.Second)
				if _, err := c.raw.Write([]byte("x")); err != nil {
					break
				}
				n++
				select {
				case <-reads:
				case last = <-replies:
					// The loop woke up after the clock moved and before
					// the byte came: netio's deadline ended the session.
				}
			}
			if last == "" {
				last = <-replies
			}
			if !strings.HasPrefix(last, "421 4.4.2 ") {
				t.Errorf("reply %q, want 421", last)
			}
			if n != tc.want {
				t.Errorf("%d bytes read before the 421, want %d", n, tc.want)
			}
		})
	}
}

func TestDripEnded(t *testing.T) {
	for _, tc := range dripCases {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{t: time.Unix(1e9, 0)}
			var cc *clockConn
			cfg := Config{Timeout: 5 * time.Second, MinDataRate: tc.rate}
			cli, br, _ := pipeSession(t, cfg, hooks{now: clk.now, wrap: func(c net.Conn) net.Conn {
				cc = &clockConn{Conn: c, clk: clk}
				return cc
			}})
			if tc.before != "" {
				// Once the client has the replies, the sink has
				// finished the read that brought the commands.
				fmt.Fprintf(cli, "EHLO c\r\nMAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\n%s", tc.before)
				finals := 3
				if strings.HasPrefix(tc.before, "DATA") {
					finals++
				}
				for finals > 0 {
					l, err := br.ReadString('\n')
					if err != nil {
						t.Fatal(err)
					}
					if l[3] == ' ' {
						finals--
					}
				}
			}
			cc.perRead.Store(int64(time.Second))
			replies := make(chan string, 1)
			go func() {
				var b strings.Builder
				for {
					l, err := br.ReadString('\n')
					b.WriteString(l)
					if err != nil {
						break
					}
				}
				replies <- b.String()
			}()
			n := 0
			for ; n < 100; n++ {
				if _, err := cli.Write([]byte("x")); err != nil {
					break
				}
			}
			got := <-replies
			lines := strings.Split(strings.TrimSuffix(got, "\r\n"), "\r\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "421 4.4.2 ") {
				t.Errorf("last reply %q, want 421", last)
			}
			if n != tc.want {
				t.Errorf("%d bytes read before the 421, want %d\n%s", n, tc.want, got)
			}
		})
	}
}

// On the loops engine a client that sends nothing is ended by netio's
// deadline for the connection (OnTimeout) with 421, once the clock has
// passed it: not before, and without any input to look at the time.
func TestSilentClientLoops(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	ended := make(chan SessionInfo, 1)
	s := startSink(t, Config{Engine: EngineLoops, Timeout: 5 * time.Second, OnSessionEnd: func(i SessionInfo) { ended <- i }}, hooks{now: clk.now})
	c := dial(t, s)
	c.cmd(250, "EHLO c")
	clk.advance(4 * time.Second)
	s.wakeLoops()      // the loop looks at the time: 4 s is not late
	c.cmd(250, "NOOP") // the deadline starts again: 9 s
	clk.advance(5 * time.Second)
	s.wakeLoops()
	if got := c.expect(421); !strings.HasPrefix(got, "4.4.2 ") {
		t.Errorf("421 %q", got)
	}
	if _, err := c.R.ReadByte(); err != io.EOF {
		t.Errorf("after the 421: %v, want EOF", err)
	}
	if i := <-ended; i.Quit {
		t.Errorf("session end %+v", i)
	}
	if st := s.Stats(); st.Aborted != 1 || st.Errors[421] != 1 {
		t.Errorf("stats %+v", st)
	}
}
