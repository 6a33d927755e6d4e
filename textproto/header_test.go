package textproto

import (
	"math/rand/v2"
	stdtp "net/textproto"
	"reflect"
	"testing"
)

var canonicalKeys = []string{
	"", "a", "A", "-", "--", "a-", "-a", "accept-encoding", "ACCEPT-ENCODING", "Accept-Encoding",
	"content-type", "CONTENT-type", "cOnTeNt-TyPe", "mime-version", "MIME-Version", "Message-ID",
	"dkim-signature", "x-imforwards", "user-agent", "foo-bar_baz", "foo.bar", "foo bar", "Foo Bar",
	"foo\x00bar", "föö", "x\x80", "a:b", "a\tb", "1234", "1a-2b", "!#$%&'*+-.^_`|~", "@", "a@b",
	"C", "c", "cc", "CC", "Host", "HOST", "host ", " host", "X-Forwarded-For", "x-forwarded-for",
	"www-authenticate", "WWW-Authenticate", "set-cookie", "SET-COOKIE",
}

func TestCanonicalMIMEHeaderKey(t *testing.T) {
	for _, k := range canonicalKeys {
		if got, want := CanonicalMIMEHeaderKey(k), stdtp.CanonicalMIMEHeaderKey(k); got != want {
			t.Errorf("CanonicalMIMEHeaderKey(%q) = %q, net/textproto gives %q", k, got, want)
		}
	}
	// Every short key over a small alphabet of interesting bytes.
	alphabet := []byte("aZ-_ .\x00\x80:1")
	var b []byte
	var walk func(depth int)
	walk = func(depth int) {
		k := string(b)
		if got, want := CanonicalMIMEHeaderKey(k), stdtp.CanonicalMIMEHeaderKey(k); got != want {
			t.Fatalf("CanonicalMIMEHeaderKey(%q) = %q, net/textproto gives %q", k, got, want)
		}
		if depth == 0 {
			return
		}
		for _, c := range alphabet {
			b = append(b, c)
			walk(depth - 1)
			b = b[:len(b)-1]
		}
	}
	walk(4)
}

func TestCanonicalMIMEHeaderKeyAllocs(t *testing.T) {
	for _, k := range []string{"Content-Type", "content-type", "X-Custom"} {
		got := testing.AllocsPerRun(100, func() { CanonicalMIMEHeaderKey(k) })
		want := testing.AllocsPerRun(100, func() { stdtp.CanonicalMIMEHeaderKey(k) })
		if got > want {
			t.Errorf("CanonicalMIMEHeaderKey(%q): %v allocs, net/textproto %v", k, got, want)
		}
	}
}

func FuzzCanonicalMIMEHeaderKey(f *testing.F) {
	for _, k := range canonicalKeys {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, k string) {
		if got, want := CanonicalMIMEHeaderKey(k), stdtp.CanonicalMIMEHeaderKey(k); got != want {
			t.Fatalf("CanonicalMIMEHeaderKey(%q) = %q, net/textproto gives %q", k, got, want)
		}
	})
}

// TestMIMEHeaderMethods runs the same random sequence of Add, Set, Get,
// Values and Del on a MIMEHeader and on net/textproto's.
func TestMIMEHeaderMethods(t *testing.T) {
	keys := []string{"a", "A", "content-type", "Content-Type", "x y", "X Y", "", "foo\x00", "-"}
	rng := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 50; round++ {
		ours, std := MIMEHeader{}, stdtp.MIMEHeader{}
		for i := 0; i < 40; i++ {
			k, v := keys[rng.IntN(len(keys))], string(rune('a'+rng.IntN(26)))
			switch rng.IntN(5) {
			case 0:
				ours.Add(k, v)
				std.Add(k, v)
			case 1:
				ours.Set(k, v)
				std.Set(k, v)
			case 2:
				if got, want := ours.Get(k), std.Get(k); got != want {
					t.Fatalf("Get(%q) = %q, want %q", k, got, want)
				}
			case 3:
				if got, want := ours.Values(k), std.Values(k); !reflect.DeepEqual(got, want) {
					t.Fatalf("Values(%q) = %q, want %q", k, got, want)
				}
			case 4:
				ours.Del(k)
				std.Del(k)
			}
			if !reflect.DeepEqual(map[string][]string(ours), map[string][]string(std)) {
				t.Fatalf("after step %d: %v, net/textproto %v", i, ours, std)
			}
		}
	}
	// A nil MIMEHeader reads as empty.
	var h MIMEHeader
	if h.Get("a") != "" || h.Values("a") != nil {
		t.Error("nil MIMEHeader is not empty")
	}
}
