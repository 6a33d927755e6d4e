package digest

import (
	"errors"
	"strings"
	"testing"
)

// Published test vectors (RFC 1321, FIPS 180-2 examples).
var vectors = []struct {
	alg      Algorithm
	in, want string
}{
	{MD5, "", "d41d8cd98f00b204e9800998ecf8427e"},
	{MD5, "abc", "900150983cd24fb0d6963f7d28e17f72"},
	{MD5, "message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
	{MD5, "12345678901234567890123456789012345678901234567890123456789012345678901234567890", "57edf4a22be3c955ac49da2e2107b67a"},
	{SHA1, "", "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
	{SHA1, "abc", "a9993e364706816aba3e25717850c26c9cd0d89d"},
	{SHA1, "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"},
	{SHA224, "", "d14a028c2a3a2bc9476102bb288234c415a2b01f828ea62ac5b3e42f"},
	{SHA224, "abc", "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7"},
	{SHA256, "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	{SHA256, "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	{SHA256, "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	{SHA384, "", "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b95b"},
	{SHA384, "abc", "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"},
	{SHA512, "", "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"},
	{SHA512, "abc", "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"},
}

func TestVectors(t *testing.T) {
	covered := map[Algorithm]bool{}
	for _, v := range vectors {
		covered[v.alg] = true
		s, err := Reader(v.alg, strings.NewReader(v.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.String(); got != v.want {
			t.Errorf("%s(%q) = %s, want %s", v.alg, v.in, got, v.want)
		}
		p, err := ParseSum(v.alg, strings.ToUpper(v.want))
		if err != nil || !p.Equal(s) || !s.MatchHex([]byte(strings.ToUpper(v.want))) {
			t.Errorf("%s: ParseSum/MatchHex disagree with %s: %v", v.alg, v.want, err)
		}
	}
	for _, a := range Algorithms() {
		if !covered[a] {
			t.Errorf("no test vector for %s", a)
		}
	}
}

func TestAlgorithmNames(t *testing.T) {
	for _, a := range Algorithms() {
		for _, name := range []string{a.String(), a.Tag(), a.String() + "sum", strings.ToUpper(a.String())} {
			got, err := ParseAlgorithm(name)
			if err != nil || got != a {
				t.Errorf("ParseAlgorithm(%q) = %v, %v; want %v", name, got, err, a)
			}
		}
		if a.New().Size() != a.Size() {
			t.Errorf("%s: New().Size() = %d, Size() = %d", a, a.New().Size(), a.Size())
		}
	}
	for _, bad := range []string{"", "md4", "sha3", "sum", "blake2"} {
		if _, err := ParseAlgorithm(bad); !errors.Is(err, ErrUnknownAlgorithm) {
			t.Errorf("ParseAlgorithm(%q) error = %v, want ErrUnknownAlgorithm", bad, err)
		}
	}
	var zero Algorithm
	if zero.Valid() || zero.New() != nil || zero.Size() != 0 || Algorithm(200).String() != "Algorithm(200)" {
		t.Error("invalid Algorithm values must be inert")
	}
}

func TestParseSumErrors(t *testing.T) {
	for _, c := range []struct {
		alg Algorithm
		hex string
	}{
		{MD5, ""},
		{MD5, "d41d8cd98f00b204e9800998ecf8427"},   // short
		{MD5, "d41d8cd98f00b204e9800998ecf8427e0"}, // long
		{MD5, "g41d8cd98f00b204e9800998ecf8427e"},  // not hex
		{SHA1, "d41d8cd98f00b204e9800998ecf8427e"}, // wrong size for alg
	} {
		if _, err := ParseSum(c.alg, c.hex); !errors.Is(err, ErrMalformedSum) {
			t.Errorf("ParseSum(%s, %q) error = %v, want ErrMalformedSum", c.alg, c.hex, err)
		}
	}
	if _, err := ParseSum(0, ""); !errors.Is(err, ErrUnknownAlgorithm) {
		t.Errorf("ParseSum(0) error = %v", err)
	}
	var s Sum
	if s.MatchHex(nil) || s.Len() != 0 || s.String() != "" {
		t.Error("zero Sum must match nothing")
	}
}
