package smtpsource_test

import (
	"crypto/md5"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/wirespeed/wirespeed/smtpsource"
)

// An mbox (mboxrd) split into its messages: the "From " lines go, and a
// quoted ">From " line in a body loses one '>'.
func ExampleSplitMbox() {
	mbox := "From a@example.com Thu Dec  3 10:00:00 2026\n" +
		"Subject: one\n\nHello.\n>From the archive.\n\n" +
		"From b@example.com Thu Dec  3 10:01:00 2026\n" +
		"Subject: two\n\nBye.\n"
	for i, m := range smtpsource.SplitMbox([]byte(mbox)) {
		fmt.Printf("%d: %q\n", i+1, m)
	}
	// Output:
	// 1: "Subject: one\n\nHello.\nFrom the archive.\n"
	// 2: "Subject: two\n\nBye.\n"
}

// The messages of a Maildir, for Config.MessageSet: cur/ and new/
// together, by file name; tmp/ holds deliveries in progress and is left
// out.
func ExampleLoadMessages() {
	dir, err := os.MkdirTemp("", "maildir")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for name, body := range map[string]string{
		"cur/1764756000.1.host:2,S": "Subject: read\n\nOld news.\n",
		"new/1764757000.2.host":     "Subject: unread\n\nNews.\n",
		"tmp/1764758000.3.host":     "Subject: half-written\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	msgs, err := smtpsource.LoadMessages(dir)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		fmt.Println(strings.SplitN(string(m), "\r\n", 2)[0]) // lines end with CRLF
	}
	// Output:
	// Subject: read
	// Subject: unread
}

// A sink's digest log checked against what a run delivered: one message
// arrived twice and one never.
func ExampleVerify() {
	a, b, c := []byte("Subject: a\r\n\r\nA\r\n"), []byte("Subject: b\r\n\r\nB\r\n"), []byte("Subject: c\r\n\r\nC\r\n")
	digest := func(m []byte) smtpsource.Digest { return smtpsource.Digest{MD5: md5.Sum(m), Size: int64(len(m))} }
	delivered := []smtpsource.Digest{digest(a), digest(b), digest(c)}
	line := func(m []byte) string { return fmt.Sprintf("%x %d\n", md5.Sum(m), len(m)) }
	sinkLog := "# md5 bytes\n" + line(a) + line(b) + line(b)
	v, err := smtpsource.Verify(strings.NewReader(sinkLog), delivered)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("matched %d, missing %d, unexpected %d, ok %v\n", v.Matched, v.Missing, v.Unexpected, v.OK())
	// Output: matched 2, missing 1, unexpected 1, ok false
}
