package tcpperf_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/wirespeed/wirespeed/tcpperf"
)

// A run's Result kept as JSON, to compare with later runs (or feed
// to a dashboard); the loops sleep between sends (Config.Wait), as they
// should on a machine shared with the server. The percentiles are in
// microseconds, under keys such as "p99_us".
func ExampleResult_MarshalJSON() {
	ln := echoServer()
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := tcpperf.Run(ctx, tcpperf.Config{
		Addr: ln.Addr().String(), Conns: 2, QPS: 100, Duration: 100 * time.Millisecond,
		Wait: tcpperf.WaitSleep, DrainTimeout: 10 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "tcpperf")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "run.json")
	if err := os.WriteFile(name, b, 0o644); err != nil {
		log.Fatal(err)
	}

	// Later: read it back.
	b, err = os.ReadFile(name)
	if err != nil {
		log.Fatal(err)
	}
	var saved struct {
		Sent, Received, Errors int64
		Wait                   string
		WaitChosen             bool    `json:"wait_chosen"`
		P99                    float64 `json:"p99_us"`
	}
	if err := json.Unmarshal(b, &saved); err != nil {
		log.Fatal(err)
	}
	fmt.Println(saved.Sent, saved.Received, saved.Errors, saved.Wait, saved.WaitChosen, saved.P99 > 0)
	// Output: 10 10 0 sleep false true
}
