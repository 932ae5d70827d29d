package proxy

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzLabels checks that the upstream's name in messages, a cut string and
// an appended message stay within their bounds and, from valid UTF-8, are
// valid UTF-8: no cut splits a character.
func FuzzLabels(f *testing.F) {
	f.Add(strings.Repeat("é", 70), 11)
	f.Add(strings.Repeat("a", 116)+"🙂", 3)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if !utf8.ValidString(s) {
			return
		}
		n = max(n%300, 0)
		name := Upstream{Command: []string{"server", s}}.String()
		if len(name) > 2+120 || !utf8.ValidString(name) {
			t.Fatalf("Upstream.String() = %q (%d bytes): want valid UTF-8 of at most 122 bytes", name, len(name))
		}
		if c := cutString(s, n); !utf8.ValidString(c) || (len(s) > n && len(c) > n+len("…")) {
			t.Fatalf("cutString(%q, %d) = %q", s, n, c)
		}
		if b := appendMax([]byte("x"), s, n); !utf8.Valid(b) || len(b) > max(n, 1) {
			t.Fatalf("appendMax(x, %q, %d) = %q", s, n, b)
		}
	})
}
