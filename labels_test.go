package scrollback

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/scrollback-dev/scrollback/codemode"
)

// FuzzLabels checks that every label and message the engine shortens (the
// source of a nested Code Mode copy, of a script, a quoted argument in an
// error) stays within its bound and, when its input is valid UTF-8, is valid
// UTF-8: no cut splits a character.
func FuzzLabels(f *testing.F) {
	f.Add("fetch", strings.Repeat("é", 150))
	f.Add("t", strings.Repeat("a", 196)+"🙂🙂")
	f.Fuzz(func(t *testing.T, tool, text string) {
		if !utf8.ValidString(tool) || !utf8.ValidString(text) {
			return
		}
		args, _ := json.Marshal(text)
		src := nestedSource(codemode.Copy{Call: 3, Tool: tool, Args: args})
		if len(src) > 200 || !utf8.ValidString(src) {
			t.Fatalf("nestedSource = %q (%d bytes): want valid UTF-8 of at most 200 bytes", src, len(src))
		}
		if s := codeSource(text); len(s) > len("run_code: ")+120 || !utf8.ValidString(s) {
			t.Fatalf("codeSource(%q) = %q: want valid UTF-8 of at most 130 bytes", text, s)
		}
		if s := quoteArg(text); !utf8.ValidString(s) || (len(text) > 80 && (!strings.Contains(s, "bytes cut)") || len(s) > 2+4*80)) {
			t.Fatalf("quoteArg(%q) = %q", text, s)
		}
	})
}
