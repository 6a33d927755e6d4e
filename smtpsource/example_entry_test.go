package smtpsource_test

import (
	"context"
	"fmt"
	"log"
	"sync/atomic"
	"time"

	"github.com/wirespeed/wirespeed/smtpsink"
	"github.com/wirespeed/wirespeed/smtpsource"
)

// Watching a run from another goroutine, as a metrics endpoint or a
// dashboard would: Counts may be read at any time, and after Run returns
// they agree with its Result. The run is bounded in messages, in time and
// per exchange.
func ExampleLive() {
	sink, err := smtpsink.Listen(context.Background(), smtpsink.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		log.Fatal(err)
	}
	go sink.Serve()
	defer sink.Close()

	live := new(smtpsource.Live)
	stop := make(chan struct{})
	watched := make(chan struct{})
	var delivered atomic.Int64 // what a metrics handler would serve
	// The watcher:
	go func() {
		defer close(watched)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				delivered.Store(live.Counts().Delivered)
			case <-stop:
				return
			}
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := smtpsource.Run(ctx, smtpsource.Config{
		Addr: sink.Addr().String(), Sessions: 2, Messages: 20, Recipients: 2,
		Reuse: true, Duration: 30 * time.Second, Timeout: 10 * time.Second,
		Live: live,
	})
	close(stop)
	<-watched
	if err != nil {
		log.Fatal(err)
	}
	c := live.Counts()
	fmt.Println(c.Started, c.Delivered, c.Failed, c.RcptOK, c.Open, c.Replies["rcpt"])
	fmt.Println(c.Delivered == res.Delivered, c.Connections == res.Connections)
	// Output:
	// 20 20 0 40 0 map[250:40]
	// true true
}
