package tcpperf

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"

	"github.com/wirespeed/wirespeed/netio"
)

// A CPU no loop may be pinned to (here one past any CPU set) is a
// configuration error Check tells and Run returns before it connects, on
// either engine. Check said nothing; EngineTcpperf opened every
// connection to the server first, and only then failed.
func TestUnpinnableCPUBeforeConnecting(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		if engine == EngineNetio && !netioPins {
			t.Skip("netio's portable loops pin nothing: Config.CPUs is refused")
		}
		addr := server(t, echo)
		cfg := Config{Engine: engine, Addr: addr, Conns: 2, Loops: 2, CPUs: []int{0, 1 << 20}}
		var ce *ConfigError
		if err := cfg.Check(); !errors.As(err, &ce) || ce.Field != "CPUs" || !errors.Is(err, ErrConfig) {
			t.Errorf("Check: %v, want a *ConfigError for CPUs", err)
		}
		var dials atomic.Int64
		_, err := RunEnv(context.Background(), cfg, Env{
			Dial: func(ctx context.Context, network, a string) (net.Conn, error) {
				dials.Add(1)
				var d net.Dialer
				return d.DialContext(ctx, network, a)
			},
			LoopDial: func(ctx context.Context, s *netio.Loops, network, a string) (*netio.LoopConn, error) {
				dials.Add(1)
				return s.Dial(ctx, network, a)
			},
		})
		if !errors.As(err, &ce) || ce.Field != "CPUs" || dials.Load() != 0 {
			t.Errorf("Run: %v after %d dials, want a *ConfigError for CPUs and none", err, dials.Load())
		}
	})
}
