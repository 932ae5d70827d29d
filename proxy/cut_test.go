package proxy

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testCut returns a cutReader over in whose messages keep head text bytes
// before cutting, tail bytes of the first cut string and bin bytes of
// base64.
func testCut(in io.Reader, lines bool, head, tail int, bin int64) *cutReader {
	c := newCutReader(in, lines, 0, tail, bin, "N0NCE")
	c.headMax = int64(head)
	return c
}

func cutAll(t testing.TB, in string, lines bool, head, tail int, bin int64) string {
	t.Helper()
	// One byte at a time, so that state crossing reads is exercised.
	out, err := io.ReadAll(testCut(iotest.OneByteReader(strings.NewReader(in)), lines, head, tail, bin))
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := io.ReadAll(testCut(strings.NewReader(in), lines, head, tail, bin))
	if !bytes.Equal(out, whole) {
		t.Fatalf("byte by byte %q, in one piece %q", out, whole)
	}
	return string(out)
}

func textResult(text string) string {
	return `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`
}

func TestCutReader(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, c := range []struct {
		name       string
		in         string
		head, tail int
		bin        int64
		want       string
	}{
		{"under the budget", textResult(`héllo wörld`), 100, 10, 100, textResult(`héllo wörld`)},
		{"head and tail kept, dropped counted",
			textResult(`abcdefghijklmnop`), 4, 4, 100,
			textResult(`abcd\n[scrollback-cut:N0NCE:8:0:lt]\nmnop`)},
		{"the envelope after the result, as the TypeScript SDK writes it",
			`{"result":{"content":[{"type":"text","text":"abcdefghijklmnop"}]},"jsonrpc":"2.0","id":7}`, 4, 4, 100,
			`{"result":{"content":[{"type":"text","text":"abcd\n[scrollback-cut:N0NCE:8:0:lt]\nmnop"}]},"jsonrpc":"2.0","id":7}`},
		{"keys and other members never cut",
			`{"result":{"content":[{"text":"abcdefghij","type":"text","annotations":{"audience":["user"]}}],"isError":false},"jsonrpc":"2.0","id":"x"}`, 2, 2, 100,
			`{"result":{"content":[{"text":"ab\n[scrollback-cut:N0NCE:6:0:lt]\nij","type":"text","annotations":{"audience":["user"]}}],"isError":false},"jsonrpc":"2.0","id":"x"}`},
		{"notifications untouched",
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"aaaaaaaaaaaaaaaaaaaa","text":"bbbbbbbbbbbbbbbbbb"}}`, 1, 1, 1,
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"aaaaaaaaaaaaaaaaaaaa","text":"bbbbbbbbbbbbbbbbbb"}}`},
		{"errors untouched",
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"mmmmmmmmmmmmmmmmm","data":{"text":"dddddddddddddddd"}}}`, 1, 1, 1,
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"mmmmmmmmmmmmmmmmm","data":{"text":"dddddddddddddddd"}}}`},
		{"_meta untouched",
			`{"jsonrpc":"2.0","id":2,"result":{"_meta":{"text":"mmmmmmmmmmmm"},"content":[]}}`, 1, 1, 1,
			`{"jsonrpc":"2.0","id":2,"result":{"_meta":{"text":"mmmmmmmmmmmm"},"content":[]}}`},
		{"a later string keeps only its token",
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"abcdefgh"},{"type":"text","text":"ijkl"}]}}`, 4, 2, 100,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"abcd\n[scrollback-cut:N0NCE:2:0:lt]\ngh"},{"type":"text","text":"[scrollback-cut:N0NCE:4:0:]"}]}}`},
		{"dropped bytes decoded, not escaped; the tail starts at a line",
			textResult(`ab\ncd\u00e9\"\\xy\nzz`), 2, 7, 100,
			textResult(`ab\n[scrollback-cut:N0NCE:10:2:lt]\nzz`)},
		{"never inside a character",
			textResult(`aébcdéf`), 2, 3, 100,
			textResult(`aé\n[scrollback-cut:N0NCE:3:0:lt]\néf`)},
		{"never inside an escape",
			textResult(`a\u00e9bcdefg`), 2, 4, 100,
			textResult(`a\u00e9\n[scrollback-cut:N0NCE:2:0:lt]\ndefg`)},
		{"the tail starts at a character",
			textResult(`abcdefgéh`), 2, 3, 100,
			textResult(`ab\n[scrollback-cut:N0NCE:5:0:lt]\néh`)},
		{"surrogate pairs count four bytes",
			textResult(`ab\ud83d\ude00\ud83d\ude00yz`), 2, 2, 100,
			textResult(`ab\n[scrollback-cut:N0NCE:8:0:lt]\nyz`)},
		{"structured content has its own budget",
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"abcdef"}],"structuredContent":{"k":"uvwxyz","n":[1,"rs"]}}}`, 10, 2, 100,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"abcdef"}],"structuredContent":{"k":"uvwxyz","n":[1,"rs"]}}}`},
		{"structured content cut",
			`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"k":"uvwxyz","n":[1,"rs"]},"content":[]}}`, 3, 2, 100,
			`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"k":"uvw\n[scrollback-cut:N0NCE:1:0:lt]\nyz","n":[1,"[scrollback-cut:N0NCE:2:0:]"]},"content":[]}}`},
		{"binary within the budget passes whole",
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","data":"` + b64("0123456789") + `","mimeType":"image/png"}]}}`, 1, 1, 16,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","data":"` + b64("0123456789") + `","mimeType":"image/png"}]}}`},
		{"binary over the budget replaced whole",
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","data":"` + b64("0123456789") + `","mimeType":"image/png"}]}}`, 1, 1, 15,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","data":"` + b64("scrollback-cut:N0NCE:16") + `","mimeType":"image/png"}]}}`},
		{"each line has its own budget",
			textResult("abcdefgh") + "\n" + textResult("abcdefgh") + "\n", 2, 2, 100,
			textResult(`ab\n[scrollback-cut:N0NCE:4:0:lt]\ngh`) + "\n" + textResult(`ab\n[scrollback-cut:N0NCE:4:0:lt]\ngh`) + "\n"},
		{"server-sent events",
			"event: message\nid: 3\ndata: " + textResult("abcdefgh") + "\n\n", 2, 2, 100,
			"event: message\nid: 3\ndata: " + textResult(`ab\n[scrollback-cut:N0NCE:4:0:lt]\ngh`) + "\n\n"},
		{"a batch",
			`[` + textResult("abcdefgh") + `,` + textResult("abcdefgh") + `]`, 2, 2, 100,
			`[` + textResult(`ab\n[scrollback-cut:N0NCE:4:0:lt]\ngh`) + `,` + textResult(`ab\n[scrollback-cut:N0NCE:4:0:lt]\ngh`) + `]`},
		{"a malformed line does not confuse the next (nothing held back is lost)",
			"{\"result\":{\"text\":\"abc\n" + textResult("abcdefgh") + "\n", 2, 2, 100,
			"{\"result\":{\"text\":\"ab\\n[scrollback-cut:N0NCE:0:0:lt]\\nc\n" + textResult(`ab\n[scrollback-cut:N0NCE:4:0:lt]\ngh`) + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := cutAll(t, c.in, true, c.head, c.tail, c.bin); got != c.want {
				t.Errorf("cut %s:\n got %s\nwant %s", c.in, got, c.want)
			}
		})
	}
}

// TestCutReaderPrettyJSON: a JSON response body (not lines) may spread one
// message over many lines.
func TestCutReaderPrettyJSON(t *testing.T) {
	in := "{\n  \"result\": {\n    \"content\": [\n      {\"type\": \"text\", \"text\": \"abcdefgh\"}\n    ]\n  },\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1\n}\n"
	want := strings.Replace(in, `"abcdefgh"`, `"ab\n[scrollback-cut:N0NCE:4:0:lt]\ngh"`, 1)
	if got := cutAll(t, in, false, 2, 2, 100); got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// FuzzCutReader checks cutReader's invariants on any input:
//   - reading in one piece or byte by byte gives the same output;
//   - a valid JSON line stays valid JSON, and valid UTF-8 stays valid;
//   - every member of a message but "result" comes through unchanged,
//     whatever the key order;
//   - a line whose text fits the budgets comes through byte for byte.
func FuzzCutReader(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"héllo\nworld \u00e9 \"q\" \\"}]}}`), uint8(10), uint8(4))
	f.Add([]byte(`{"result":{"content":[{"type":"text","text":"abcdefghijklmnop"},{"type":"image","data":"QUJD"}]},"jsonrpc":"2.0","id":3}`), uint8(3), uint8(5))
	f.Add([]byte("[\"a\",\"b\"]\n{\"result\":{\"structuredContent\":{\"x\":\"\\ud83d\\ude00\"}}}\n"), uint8(3), uint8(2))
	f.Add([]byte("\"unterminated\n\"x\""), uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, h, tl uint8) {
		head, tail := int(h), int(tl)
		whole, err := io.ReadAll(testCut(bytes.NewReader(in), true, head, tail, int64(head)))
		if err != nil {
			t.Fatal(err)
		}
		bytewise, _ := io.ReadAll(testCut(iotest.OneByteReader(bytes.NewReader(in)), true, head, tail, int64(head)))
		if !bytes.Equal(whole, bytewise) {
			t.Fatalf("reading byte by byte gives %q, in one piece %q", bytewise, whole)
		}
		inLines := bytes.Split(in, []byte("\n"))
		outLines := bytes.Split(whole, []byte("\n"))
		if len(inLines) != len(outLines) {
			t.Fatalf("%d lines in, %d out", len(inLines), len(outLines))
		}
		for i, line := range inLines {
			out := outLines[i]
			if !json.Valid(line) {
				continue
			}
			if !json.Valid(out) {
				t.Fatalf("valid JSON %q came out invalid: %q", line, out)
			}
			if utf8.Valid(line) && !utf8.Valid(out) {
				t.Errorf("valid UTF-8 %q came out invalid: %q", line, out)
			}
			var a, b map[string]json.RawMessage
			if json.Unmarshal(line, &a) == nil && json.Unmarshal(out, &b) == nil {
				delete(a, "result")
				delete(b, "result")
				if !reflect.DeepEqual(a, b) {
					t.Errorf("the envelope of %q changed: %q", line, out)
				}
			}
			// "c2Nyb2xsYmFjay1jdXQ6" is the base64 of "scrollback-cut:".
			if !bytes.Contains(out, []byte("scrollback-cut")) && !bytes.Contains(out, []byte("c2Nyb2xsYmFjay1jdXQ6")) && !bytes.Equal(line, out) {
				t.Errorf("line %q came out as %q with no cut token", line, out)
			}
		}
	})
}

// TestMend: the cut's tokens become readable markers, and binary blocks
// it could not carry become text notes naming their type and size.
func TestMend(t *testing.T) {
	p := &Proxy{nonce: "N0NCE"}
	in := "head\n" + cutToken("N0NCE", 1234, 56, "t") + "\ntail" + cutToken("N0NCE", 7, 0, "")
	got, st := p.mendWith(in, 8<<20)
	want := "head\n" + cutMarker(1234, 56, 8<<20) + "\ntail" + cutMarker(7, 0, 8<<20)
	if got != want || st.dropped != 1241 || st.lines != 56 || st.first != 5 {
		t.Errorf("mend:\n got %q %+v\nwant %q", got, st, want)
	}
	if s, st := p.mendWith("[scrollback-cut:OTHER:1:1:]", 10); s != "[scrollback-cut:OTHER:1:1:]" || st.dropped != 0 {
		t.Errorf("another nonce's token was mended: %q", s)
	}

	img := &mcp.ImageContent{MIMEType: "image/png", Data: []byte(binToken("N0NCE", 40000000))}
	ok := &mcp.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG")}
	out, changed := p.mendBinary([]mcp.Content{ok, img})
	if !changed || len(out) != 2 || out[0] != ok {
		t.Fatalf("mendBinary: %v %v", changed, out)
	}
	note, _ := out[1].(*mcp.TextContent)
	if note == nil || !strings.Contains(note.Text, "image/png") || !strings.Contains(note.Text, "30000000 bytes") {
		t.Errorf("the note does not name the type and size: %+v", out[1])
	}
	if _, changed := p.mendBinary([]mcp.Content{ok}); changed {
		t.Errorf("an image that was carried was changed")
	}
}
