// Package gosmtp holds tests, and nothing else, that check wirespeed's dot
// decoding and encoding against github.com/emersion/go-smtp, unmodified and
// used through its public API only.
//
// The DATA tests send the same payloads to a go-smtp server, over loopback
// TCP or net.Pipe, and through wirespeed's decoders, and compare the message
// bytes each keeps, the byte at which each ends the block, and the replies
// to the commands that follow. go-smtp keeps CRLF line endings and keeps bare
// CR and LF as data, so its counterpart is Raw mode with dot.BareKeep; Raw
// with BareReject must frame alike and refuse what go-smtp keeps bare. Other
// tests compare go-smtp's message size and line length limits with
// wirespeed's, send wirespeed's Raw dot writer's output to go-smtp's server,
// go-smtp's client's output to wirespeed's Raw dot reader, and messages in
// BDAT chunks from wirespeed's ChunkWriter to go-smtp's server and
// wirespeed's Chunks reader.
//
// inside_test.go puts wirespeed inside go-smtp's server: a net.Conn that
// reads each DATA payload with wirespeed's textproto (Raw, BareKeep) once
// go-smtp has said 354, while go-smtp runs the rest of the session. Its
// test checks that go-smtp's sessions get the same messages and replies
// either way; BenchmarkGoSMTPData measures the two, the same run.
//
// Where go-smtp departs from RFC 5321 the tests say why and check that it
// does: the bare-CR cases in deviation_test.go and known_test.go, the limits
// in limits_test.go and bdat_test.go.
//
// The module is separate from wirespeed's so that users of wirespeed never
// download go-smtp.
package gosmtp
