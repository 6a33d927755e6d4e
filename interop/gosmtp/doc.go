// Package gosmtp holds tests, and nothing else, that check wirespeed's dot
// decoding against an unmodified github.com/emersion/go-smtp server.
//
// The tests send the same DATA payloads to a go-smtp server, over loopback
// TCP or net.Pipe, and through wirespeed's textproto and dot decoders, and
// compare the message bytes each one keeps, the byte at which each ends the
// block, and the replies to the commands that follow. go-smtp keeps CRLF line
// endings and keeps bare CR and LF as data, so its peer in wirespeed is the
// Raw mode with dot.BareKeep.
//
// The module is separate from wirespeed's so that users of wirespeed never
// download go-smtp.
package gosmtp
