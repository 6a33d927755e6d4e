//go:build !linux

package netio

const notSentLowat = -1
