//go:build !linux

package smtpsink

import "net"

// quickAck is Linux's TCP_QUICKACK; elsewhere there is none.
type quickAck struct{}

func newQuickAck(net.Conn) *quickAck { return nil }

func (*quickAck) ack() error { return nil }

// The engines' defaults: netio's loops run on Linux only.
const defaultEngine = EngineGoroutine

func setQuickAck(uintptr) {}
