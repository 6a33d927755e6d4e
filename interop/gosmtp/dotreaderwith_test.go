package gosmtp

import (
	"fmt"
	"io"

	"github.com/wirespeed/wirespeed/dot"
	"github.com/wirespeed/wirespeed/textproto"
)

// withDecoders are textproto's dot readers with options: Raw with BareKeep,
// go-smtp's reading, over bufio.Readers of two sizes.
func withDecoders() []decoder {
	var ds []decoder
	for _, size := range []int{4096, 16} {
		ds = append(ds, decoder{
			name: fmt.Sprintf("textproto/DotReaderWith(Raw,BareKeep)/buf%d", size), keep: true, lines: true,
			decode: func(s []byte) decoded {
				return textprotoDecode(s, size, func(r *textproto.Reader) io.Reader {
					return r.DotReaderWith(textproto.DotOptions{Mode: dot.Raw, Bare: dot.BareKeep})
				})
			},
		})
	}
	return ds
}

// limitDecoders are the Raw BareKeep decoders with a size and a line limit:
// package dot's Decoder and textproto's DotReaderWith.
func limitDecoders(maxBytes int64, maxLine int) []decoder {
	return []decoder{
		{name: "dot.Decoder", keep: true, decode: func(s []byte) decoded {
			dec := &dot.Decoder{Mode: dot.Raw, Bare: dot.BareKeep, MaxSize: maxBytes, MaxLine: maxLine}
			return dotDecode(s, dec, len(s), len(s)+1)
		}},
		{name: "textproto.DotReaderWith", keep: true, lines: true, decode: func(s []byte) decoded {
			return textprotoDecode(s, 4096, func(r *textproto.Reader) io.Reader {
				return r.DotReaderWith(textproto.DotOptions{Mode: dot.Raw, Bare: dot.BareKeep, MaxBytes: maxBytes, MaxLineBytes: maxLine})
			})
		}},
	}
}
