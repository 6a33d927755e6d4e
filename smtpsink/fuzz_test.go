package smtpsink

import (
	"bufio"
	"net"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/digest"
	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/internal/tooltest"
)

// Any input, followed by the end of a message, an empty last chunk and
// QUIT, with LMTP, size, line and bare CR/LF knobs and read buffers from
// 16 bytes: the sink never panics, the session ends, and every reply line
// is well formed. Minimizing an input takes 5000 sessions at most
// (tooltest.LimitMinimizing): at a few thousand sessions a second, the
// fuzzer's minute for each input it found took most of a run.
func FuzzSession(f *testing.F) {
	tooltest.LimitMinimizing(f, 5000)
	for _, g := range pipelineGroups {
		f.Add(g.send, uint8(0))
	}
	f.Add("EHLO x\r\nMAIL FROM:<a@b> BODY=BINARYMIME\r\nRCPT TO:<c@d>\r\nBDAT 3 LAST\r\n\n\r.", uint8(1))
	f.Add("LHLO x\r\nMAIL FROM:<>\r\nRCPT TO:<c@d>\r\nDATA\r\na\nb\r\n.\r\n", uint8(2))
	f.Add("HELO\r\nBDAT 99999999999999999999\r\nBDAT 1 LAST LAST\r\n"+strings.Repeat("z", 300)+"\r\n", uint8(3))
	f.Fuzz(func(t *testing.T, input string, knobs uint8) {
		cfg := Config{
			LMTP:             knobs&1 != 0,
			MaxSize:          int64(knobs>>1&3) * 40,
			MaxCommandBytes:  64,
			MaxDataLineBytes: int(knobs >> 3 & 1 * 20),
			MaxRecipients:    3,
			Bare:             dot.BarePolicy(knobs >> 4 % 3),
			Digest:           digest.MD5,
			OnMessage:        func(Message) {},
			ErrorLog:         quiet,
		}
		if err := cfg.validate(); err != nil {
			t.Fatal(err)
		}
		cfg = cfg.withDefaults()
		s := newServer(cfg, hooks{readBuf: 16 + int(knobs>>6)*100})
		cli, srv := net.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.serveConn(srv, nil)
		}()
		replies := make(chan []string, 1)
		go func() {
			var lines []string
			br := bufio.NewReader(cli)
			for {
				l, err := br.ReadString('\n')
				if err != nil {
					break
				}
				lines = append(lines, l)
			}
			replies <- lines
		}()
		cli.Write([]byte(input))
		cli.Write([]byte("\r\n.\r\nBDAT 0 LAST\r\nQUIT\r\n"))
		cli.Close()
		<-done
		for _, l := range <-replies {
			if len(l) < 6 || l[0] < '2' || l[0] > '5' || l[1] < '0' || l[1] > '9' || l[2] < '0' || l[2] > '9' ||
				(l[3] != ' ' && l[3] != '-') || !strings.HasSuffix(l, "\r\n") {
				t.Errorf("bad reply line %q", l)
			}
		}
	})
}
