package main

import (
	"sync"
	"testing"

	"github.com/wirespeed/wirespeed/internal/benchcase"
)

// The dot-encoding rows of `wirespeed bench`: the seed table of
// golang/go#56047, then DotReader and DotWriter on each corpus.
func init() {
	seed := []struct {
		name string
		fn   func(b *testing.B)
	}{
		{"IONull", benchcase.IONull},
		{"BufioWrite", benchcase.BufioWrite},
		{"BufioRead", benchcase.BufioRead},
		{"BufioWriteByte", benchcase.BufioWriteByte},
		{"BufioReadByte", benchcase.BufioReadByte},
	}
	for _, s := range seed {
		registerBench(benchCase{suite: "seed", group: "seed/" + s.name, impl: "bufio", bytes: benchcase.SeedSize, fn: s.fn})
	}
	for _, impl := range []string{"stdlib", "wirespeed"} {
		registerBench(benchCase{suite: "seed", group: "seed/DotWriter", impl: impl, bytes: benchcase.SeedSize, fn: func(b *testing.B) { benchcase.SeedDotWriter(impl)(b) }})
	}
	for _, impl := range []string{"stdlib", "wirespeed"} {
		registerBench(benchCase{suite: "seed", group: "seed/DotReader", impl: impl, bytes: benchcase.SeedSize, fn: func(b *testing.B) { benchcase.SeedDotReader(impl)(b) }})
	}

	// The corpora are generated when the first of their cases runs.
	corpora := sync.OnceValue(benchcase.Corpora)
	names := []string{"mail", "longline", "tiny", "base64", "binary"}
	get := func(name string) benchcase.Corpus {
		for _, c := range corpora() {
			if c.Name == name {
				return c
			}
		}
		panic("no corpus " + name)
	}
	for _, name := range names {
		size := func() int64 { return int64(len(get(name).Encoded)) }
		registerBench(benchCase{suite: "dot", group: "DotReader/corpus=" + name, impl: "copy", size: size,
			fn: func(b *testing.B) { benchcase.CorpusCopy(get(name))(b) }})
		for _, impl := range []string{"stdlib", "wirespeed"} {
			registerBench(benchCase{suite: "dot", group: "DotReader/corpus=" + name, impl: impl, size: size,
				fn: func(b *testing.B) { benchcase.CorpusDotReader(get(name), impl)(b) }})
		}
	}
	for _, name := range names {
		size := func() int64 { return int64(len(get(name).Plain)) }
		for _, impl := range []string{"stdlib", "wirespeed"} {
			registerBench(benchCase{suite: "dot", group: "DotWriter/corpus=" + name, impl: impl, size: size,
				fn: func(b *testing.B) { benchcase.CorpusDotWriter(get(name), impl)(b) }})
		}
	}
}
