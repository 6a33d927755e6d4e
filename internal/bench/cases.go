package bench

import (
	"sync"

	"github.com/wirespeed/wirespeed/internal/benchcase"
	"github.com/wirespeed/wirespeed/internal/corpus"
)

// A Case is one measurement of `wirespeed bench`: one implementation (Impl)
// of one workload (Group). Cases of the same group are printed side by
// side, and every impl is compared with the group's baseline impl.
type Case struct {
	Suite string // "seed", "dot", "textproto", "digest", "netio": selects cases on the command line
	Group string // e.g. "DotReader/corpus=mail"
	Impl  string // e.g. "stdlib", "wirespeed"
	// Bytes is the payload of one op, for MB/s; 0 reports no throughput.
	Bytes int64
	// Size, if set, gives Bytes when the case runs (for inputs generated
	// lazily, so that other commands and suites do not pay for them).
	Size func() int64
	// Fn is the benchmark body, running the code path users call.
	Fn func(benchcase.B)
}

// baselineImpls are the implementations speed-ups are measured against, in
// order of preference.
var baselineImpls = []string{"stdlib", "io.Copy", "ReadFile+Sum"}

// Cases returns every case of `wirespeed bench`, in report order. Inputs
// are generated when the first case needing them runs.
func Cases() []Case {
	var cs []Case
	cs = append(cs, seedCases()...)
	cs = append(cs, dotCases()...)
	cs = append(cs, lineCases()...)
	cs = append(cs, digestCases()...)
	cs = append(cs, coalescerCases()...)
	return cs
}

// seedCases are the seed table of golang/go#56047.
func seedCases() []Case {
	var cs []Case
	for _, s := range benchcase.SeedOps() {
		// IONull is io.Copy into io.Discard, with no bufio in the way.
		impl := "bufio"
		if s.Name == "IONull" {
			impl = "io.Copy"
		}
		cs = append(cs, Case{Suite: "seed", Group: "seed/" + s.Name, Impl: impl, Bytes: benchcase.SeedSize, Fn: s.Fn})
	}
	for _, impl := range []string{"stdlib", "wirespeed"} {
		cs = append(cs, Case{Suite: "seed", Group: "seed/DotWriter", Impl: impl, Bytes: benchcase.SeedSize, Fn: benchcase.SeedDotWriter(impl)})
	}
	for _, impl := range []string{"stdlib", "wirespeed"} {
		cs = append(cs, Case{Suite: "seed", Group: "seed/DotReader", Impl: impl, Bytes: benchcase.SeedSize, Fn: benchcase.SeedDotReader(impl)})
	}
	return cs
}

// dotCases are DotReader and DotWriter on each corpus.
func dotCases() []Case {
	corpora := sync.OnceValue(benchcase.Corpora)
	names := []string{"mail", "longline", "tiny", "base64", "binary"}
	get := func(name string) benchcase.Corpus {
		for _, c := range corpora() {
			if c.Name == name {
				return c
			}
		}
		panic("bench: no corpus " + name)
	}
	var cs []Case
	for _, name := range names {
		size := func() int64 { return int64(len(get(name).Encoded)) }
		cs = append(cs, Case{Suite: "dot", Group: "DotReader/corpus=" + name, Impl: "copy", Size: size,
			Fn: func(b benchcase.B) { benchcase.CorpusCopy(get(name))(b) }})
		for _, impl := range []string{"stdlib", "wirespeed"} {
			cs = append(cs, Case{Suite: "dot", Group: "DotReader/corpus=" + name, Impl: impl, Size: size,
				Fn: func(b benchcase.B) { benchcase.CorpusDotReader(get(name), impl)(b) }})
		}
	}
	for _, name := range names {
		size := func() int64 { return int64(len(get(name).Plain)) }
		for _, impl := range []string{"stdlib", "wirespeed"} {
			cs = append(cs, Case{Suite: "dot", Group: "DotWriter/corpus=" + name, Impl: impl, Size: size,
				Fn: func(b benchcase.B) { benchcase.CorpusDotWriter(get(name), impl)(b) }})
		}
	}
	return cs
}

// lineCases are the line and header rows (suite "textproto"): the same
// bodies as textproto's BenchmarkReadLine and BenchmarkReadMIMEHeader.
func lineCases() []Case {
	inputs := map[string]func() []byte{
		"mail":     sync.OnceValue(func() []byte { return corpus.Mail(corpus.Size) }),
		"longline": sync.OnceValue(func() []byte { return corpus.LongLine(corpus.Size) }),
		"tiny":     sync.OnceValue(func() []byte { return corpus.Tiny(corpus.Size) }),
	}
	var cs []Case
	for _, name := range []string{"mail", "longline", "tiny"} {
		data := inputs[name]
		size := func() int64 { return int64(len(data())) }
		for _, impl := range []string{"stdlib", "wirespeed"} {
			cs = append(cs, Case{Suite: "textproto", Group: "ReadLine/corpus=" + name, Impl: impl, Size: size,
				Fn: func(b benchcase.B) { benchcase.ReadLines(b, impl, data()) }})
		}
	}
	header := sync.OnceValue(func() []byte { return corpus.Header(benchcase.HeaderSize) })
	size := func() int64 { return int64(len(header())) }
	for _, impl := range []string{"stdlib", "wirespeed"} {
		cs = append(cs, Case{Suite: "textproto", Group: "ReadMIMEHeader/corpus=header", Impl: impl, Size: size,
			Fn: func(b benchcase.B) { benchcase.ReadHeader(b, impl, header()) }})
	}
	return cs
}
