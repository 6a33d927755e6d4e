#!/usr/bin/env bash
# Checks the patch for Go's net/textproto in this directory against a copy
# of the Go release CI uses (go1.27.3 unless GO_RELEASE says otherwise):
#
#   - it changes only src/net/textproto, adds no unsafe, and applies
#     cleanly (git apply --check) to the release's GOROOT;
#   - with it applied, gofmt and go vet are clean;
#   - golang/go#56047's benchmarks (4 MiB of dots through DotReader and
#     DotWriter, the patch's own benchmark code) run at least
#     MIN_SPEEDUP (20) times as fast with it as without: medians of 3
#     runs of 20 ops, the unpatched and patched test binaries by turns;
#   - with it applied, the std tests of net/textproto, net/mail, net/smtp
#     and net/http pass (net/http with -short if HTTP_SHORT=1), and the
#     patch's fuzz tests run FUZZTIME (10s) each without a failure (0
#     skips them).
#
# The GOROOT in the module cache is read-only and stays untouched: the
# script works on a copy in a temporary directory, removed at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rel=${GO_RELEASE:-go1.27.3}
min=${MIN_SPEEDUP:-20}
fuzztime=${FUZZTIME:-10s}
short=
[ "${HTTP_SHORT:-0}" = 1 ] && short=-short

patches=("$here"/*.patch)
[ ${#patches[@]} = 1 ] || { echo "want one patch in $here, have ${#patches[@]}"; exit 1; }
patch=${patches[0]}
echo "patch: $(basename "$patch")"

# Only src/net/textproto, and no unsafe in the added lines.
bad=$(git apply --numstat "$patch" | awk '$3 !~ /^src\/net\/textproto\// {print $3}')
[ -z "$bad" ] || { echo "the patch changes files outside src/net/textproto: $bad"; exit 1; }
if grep -n '^+.*unsafe' "$patch"; then
	echo "the patch adds unsafe"; exit 1
fi
git apply --stat "$patch"

src=$(GOTOOLCHAIN=$rel GOFLAGS= go env GOROOT)
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
echo "== copying $src"
cp -r "$src" "$tmp/go"
chmod -R u+w "$tmp/go"
goroot=$tmp/go

# The go command of the copy, on the copy, and nothing from the project's
# environment (GOFLAGS=-mod=mod does not suit std).
gocopy() {
	PATH=$goroot/bin:$PATH GOROOT=$goroot GOTOOLCHAIN=local GOFLAGS= GOWORK=off go "$@"
}
v=$(gocopy env GOVERSION)
[ "$v" = "$rel" ] || { echo "the copy is $v, want $rel"; exit 1; }

# The patch's benchmarks, taken from its dot_test.go, built into a test
# binary from the unpatched copy and into one from the patched copy, which
# run by turns.
benchbin() { # output file
	gocopy test -c -o "$1" net/textproto
}
median() { # benchmark name, file: the median ns/op
	awk -v b="$1" '$2 ~ "^"b"(-[0-9]+)?$" {print $4}' "$2" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'
}
tdir=$goroot/src/net/textproto
{
	sed -n 1,4p "$tdir/reader.go" | sed 's/20[0-9][0-9]/2026/'
	printf 'package textproto\n\nimport (\n\t"bufio"\n\t"bytes"\n\t"io"\n\t"math/rand/v2"\n\t"testing"\n)\n\n'
	awk '/^\+\+\+ b\/src\/net\/textproto\/dot_test.go/ {f=1; next} f && /^diff --git/ {f=0} f && /^\+/ {print substr($0, 2)}' "$patch" |
		sed -n '/^\/\/ The benchmarks of go.dev\/issue\/56047/,$p'
} > "$tdir/zz_bench_test.go"
echo "== $v, unpatched: go test -c, with the patch's benchmarks"
benchbin "$tmp/old.test"
rm "$tdir/zz_bench_test.go"

echo "== $v: git apply"
(cd "$goroot" && git apply --check "$patch" && git apply "$patch")

echo "== $v, patched: gofmt, go vet"
bad=$("$goroot/bin/gofmt" -l "$tdir")
[ -z "$bad" ] || { echo "gofmt needed on: $bad"; exit 1; }
gocopy vet net/textproto

echo "== $v, patched: go test -c"
benchbin "$tmp/new.test"
echo "== $v: the benchmarks of golang/go#56047, unpatched and patched by turns"
for i in 1 2 3; do
	for t in old new; do
		(cd "$tdir" && "$tmp/$t.test" -test.run '^$' -test.bench '^BenchmarkDot(Reader|Writer)$/^dots$' -test.benchtime 20x) |
			grep '^Benchmark' | sed "s/^/$t: /" | tee -a "$tmp/$t.txt"
	done
done
for b in BenchmarkDotReader/dots BenchmarkDotWriter/dots; do
	o=$(median "$b" "$tmp/old.txt")
	n=$(median "$b" "$tmp/new.txt")
	[ -n "$o" ] && [ -n "$n" ] || { echo "$b: no result"; exit 1; }
	awk -v b="$b" -v o="$o" -v n="$n" -v min="$min" 'BEGIN {
		r = o / n
		printf "%s: median %.0f ns/op unpatched, %.0f ns/op patched: %.1fx (want >= %dx)\n", b, o, n, r, min
		exit !(r >= min)
	}' || { echo "$b: too slow"; exit 1; }
done

echo "== $v, patched: go test net/textproto net/mail net/smtp; net/http ${short:-(without -short)}"
start=$SECONDS
gocopy test -count=1 net/textproto net/mail net/smtp
gocopy test -count=1 $short net/http
echo "tests: $((SECONDS - start))s"

if [ "$fuzztime" != 0 ]; then
	for f in FuzzDotReader FuzzDotWriter; do
		echo "== $v, patched: $f for $fuzztime"
		# (in GOROOT/src, where std is the main module, as -fuzz needs)
		(cd "$tdir" && gocopy test -run '^$' -fuzz "^$f\$" -fuzztime "$fuzztime" .)
	done
fi
echo "ok   upstream/go: $(basename "$patch") on $v"
