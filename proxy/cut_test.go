package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

func cutAll(t testing.TB, in string, max int64) string {
	t.Helper()
	// One byte at a time, so that state crossing reads is exercised.
	out, err := io.ReadAll(newCutReader(iotest.OneByteReader(strings.NewReader(in)), max, "N0NCE"))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestCutReader(t *testing.T) {
	for _, c := range []struct {
		name, in string
		max      int64
		want     string
	}{
		{"under the cap", `{"a":"hello","b":"wörld"}` + "\n", 100, `{"a":"hello","b":"wörld"}` + "\n"},
		{"cut at the cap, keys counted", `{"a":"hello world"}`, 5, `{"a":"hell [scrollback: the proxy cut 7 more bytes here N0NCE]"}`},
		{"later strings emptied, one note", `["abcdef","ghi","jk"]`, 3, `["abc [scrollback: the proxy cut 3 more bytes here N0NCE]","",""]`},
		{"keys count too", `{"key":"value"}`, 3, `{"key":" [scrollback: the proxy cut 5 more bytes here N0NCE]"}`},
		{"never inside a character", `["aé"]`, 2, `["aé"]`},
		{"cut before a character", `["aéb"]`, 2, `["aé [scrollback: the proxy cut 1 more bytes here N0NCE]"]`},
		{"never inside an escape", `["a\u00e9b"]`, 2, `["a\u00e9 [scrollback: the proxy cut 1 more bytes here N0NCE]"]`},
		{"escaped quote", `["ab\"cd","x"]`, 3, `["ab\" [scrollback: the proxy cut 2 more bytes here N0NCE]",""]`},
		{"escaped backslash before the quote", `["ab\\","cdef"]`, 5, `["ab\\","c [scrollback: the proxy cut 3 more bytes here N0NCE]"]`},
		{"each line has its own budget", "[\"abcd\"]\n[\"efgh\"]\n", 2, "[\"ab [scrollback: the proxy cut 2 more bytes here N0NCE]\"]\n[\"ef [scrollback: the proxy cut 2 more bytes here N0NCE]\"]\n"},
		{"numbers untouched", `[123456789,"ab"]`, 1, `[123456789,"a [scrollback: the proxy cut 1 more bytes here N0NCE]"]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := cutAll(t, c.in, c.max); got != c.want {
				t.Errorf("cut %q at %d:\n got %q\nwant %q", c.in, c.max, got, c.want)
			}
		})
	}
}

// FuzzCutReader checks cutReader's invariants on any input:
//   - a valid JSON line whose strings fit max comes through byte for byte;
//   - a valid JSON line stays valid JSON, and its strings' valid UTF-8
//     stays valid;
//   - the output never grows by more than one note per line;
//   - reading in one piece or byte by byte gives the same output.
func FuzzCutReader(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"héllo\nworld \u00e9 \"q\" \\"}]}}`), uint8(10))
	f.Add([]byte("[\"a\",\"b\"]\n{\"x\":\"\\ud83d\\ude00\"}\n"), uint8(3))
	f.Add([]byte("\"unterminated\n\"x\""), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, m uint8) {
		max := int64(m)
		whole, err := io.ReadAll(newCutReader(bytes.NewReader(in), max, "N0NCE"))
		if err != nil {
			t.Fatal(err)
		}
		bytewise, _ := io.ReadAll(newCutReader(iotest.OneByteReader(bytes.NewReader(in)), max, "N0NCE"))
		if !bytes.Equal(whole, bytewise) {
			t.Fatalf("reading byte by byte gives %q, in one piece %q", bytewise, whole)
		}
		inLines := bytes.Split(in, []byte("\n"))
		outLines := bytes.Split(whole, []byte("\n"))
		if len(inLines) != len(outLines) {
			t.Fatalf("%d lines in, %d out", len(inLines), len(outLines))
		}
		note := len(cutNote("N0NCE", int64(len(in))))
		for i, line := range inLines {
			out := outLines[i]
			if len(out) > len(line)+note {
				t.Errorf("line %d grew from %d to %d bytes", i, len(line), len(out))
			}
			if json.Valid(line) && stringBytes(line) <= max && !bytes.Equal(line, out) {
				t.Errorf("line %q within the cap came out as %q", line, out)
			}
			if json.Valid(line) {
				if !json.Valid(out) {
					t.Errorf("valid JSON %q came out invalid: %q", line, out)
				}
				if utf8.Valid(line) && !utf8.Valid(out) {
					t.Errorf("valid UTF-8 %q came out invalid: %q", line, out)
				}
			}
		}
	})
}

// stringBytes counts the bytes inside the string literals of a line, as
// cutReader does (escape sequences count their raw bytes).
func stringBytes(line []byte) int64 {
	var n int64
	in, esc := false, false
	for _, b := range line {
		switch {
		case !in:
			in = b == '"'
		case esc:
			esc = false
			n++
		case b == '\\':
			esc = true
			n++
		case b == '"':
			in = false
		default:
			n++
		}
	}
	return n
}
