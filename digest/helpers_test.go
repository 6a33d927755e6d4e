package digest

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// randomBytes returns n deterministic pseudo-random bytes.
func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// writeFiles creates one file per size in a new temporary directory and
// returns their paths and contents.
func writeFiles(t testing.TB, sizes []int) ([]string, [][]byte) {
	t.Helper()
	dir := t.TempDir()
	paths := make([]string, len(sizes))
	data := make([][]byte, len(sizes))
	for i, n := range sizes {
		data[i] = randomBytes(uint64(i)+1, n)
		paths[i] = filepath.Join(dir, "f"+strconv.Itoa(i))
		if err := os.WriteFile(paths[i], data[i], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return paths, data
}

// edgeSizes are the lengths where block and buffer boundaries can go wrong.
var edgeSizes = []int{
	0, 1, 55, 56, 63, 64, 65, 127, 128, 129,
	bufferSize - 1, bufferSize, bufferSize + 1,
	2*bufferSize - 1, 2 * bufferSize, 2*bufferSize + 1,
	3*bufferSize + 7, 32<<10 - 1, 32 << 10, 32<<10 + 1,
	5<<20 + 3, // large
}
