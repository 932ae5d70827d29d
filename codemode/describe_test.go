package codemode

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTypeScript(t *testing.T) {
	tests := []struct{ schema, want string }{
		{``, `any`},
		{`not json`, `any`},
		{`{}`, `any`},
		{`{"type":"string"}`, `string`},
		{`{"type":"integer"}`, `number`},
		{`{"type":["string","null"]}`, `string | null`},
		{`{"enum":["a","b",3]}`, `"a" | "b" | 3`},
		{`{"const":true}`, `true`},
		{`{"type":"array","items":{"type":"number"}}`, `number[]`},
		{`{"type":"array","items":{"enum":["x","y"]}}`, `("x" | "y")[]`},
		{`{"type":"array"}`, `any[]`},
		{`{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]}`, `string | string[]`},
		{`{"type":"object"}`, `{ [key: string]: any }`},
		{`{"type":"object","additionalProperties":{"type":"integer"}}`, `{ [key: string]: number }`},
		{`{"type":"object","properties":{"b":{"type":"string","description":"first\nline"},"a-b":{"type":"boolean"}},"required":["b"]}`,
			"{\n  b: string; // first line\n  \"a-b\"?: boolean;\n}"},
		{`{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}}}`,
			"{\n  o?: {\n    x: number;\n  };\n}"},
		{`{"type":"weird"}`, `any`},
	}
	for _, tt := range tests {
		if got := TypeScript(json.RawMessage(tt.schema)); got != tt.want {
			t.Errorf("TypeScript(%s) =\n%s\nwant\n%s", tt.schema, got, tt.want)
		}
	}
}

func TestTypeScriptDepth(t *testing.T) {
	s := `{"type":"string"}`
	for i := 0; i < 50; i++ {
		s = `{"type":"array","items":` + s + `}`
	}
	if got := TypeScript(json.RawMessage(s)); !strings.Contains(got, "any") || len(got) > 200 {
		t.Errorf("deep schema: %s", got)
	}
}

func TestDescribeSkipsRunCode(t *testing.T) {
	d := Describe([]Tool{{Name: Name}, {Name: "a", Description: "does\n a"}, {Name: "b"}})
	want := "declare const tools: {\n  // does a\n  a(input: any): Promise<any>;\n  b(input: any): Promise<any>;\n};\n"
	if d != want {
		t.Errorf("Describe = %q, want %q", d, want)
	}
}

func TestDescribe(t *testing.T) {
	in := json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"the copy's id"},"n":{"type":"integer","description":"` + strings.Repeat("long words here ", 10) + `"},"o":{"type":"object","properties":{"x":{"type":"number","description":"not shown"}}}},"required":["id"]}`)
	out := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"not shown"},"rows":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}},"required":["k"]}}},"required":["text"]}`)
	got := Describe([]Tool{{Name: "read_page", Description: "Read a page.", InputSchema: in, OutputSchema: out}, {Name: "x-y"}})
	want := `declare const tools: {
  // Read a page.
  read_page(input: { id: string; n?: number; o?: { x?: number } }): Promise<{ text: string; rows?: { k: string }[] }>;
  "x-y"(input: any): Promise<any>;
};
`
	if got != want {
		t.Errorf("Describe =\n%s\nwant\n%s", got, want)
	}
}

// An optional property's type leaves out null; property descriptions are
// left out (types, not prose); a long tool description gives its first
// sentence, cut at the end of a word.
func TestDescribeShortens(t *testing.T) {
	in := json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"the copy's id"},"limit":{"type":["null","integer"]}},"required":["id"]}`)
	long := "Search the issues of a repository with GitHub's search syntax, sorted and paginated however the caller wants them to be, with a few filters. More words."
	got := Describe([]Tool{{Name: "a", InputSchema: in, Description: long}, {Name: "b", InputSchema: in}})
	if strings.Contains(got, "the copy's id") || strings.Contains(got, "null") || !strings.Contains(got, "a(input: { id: string; limit?: number })") {
		t.Errorf("Describe =\n%s", got)
	}
	if !strings.Contains(got, "  // Search the issues of a repository with GitHub's search syntax, sorted and paginated however the…(45 bytes cut)") ||
		strings.Contains(got, "More words") {
		t.Errorf("the tool's comment is not its first sentence cut at a word:\n%s", got)
	}
}

// FuzzTypeScript: for any input, TypeScript returns without panicking, its
// output is valid UTF-8 when the input is, and its size is bounded by the
// input's (no blow-up from nesting).
func FuzzTypeScript(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"array","items":{"enum":[1,"x"]}}},"required":["a"]}`)
	f.Add(`{"anyOf":[{"type":["string","null"]},{"const":{"k":1}}]}`)
	f.Add(`{"properties":{"\u00e9":{"description":"\u4e16"}}}`)
	f.Fuzz(func(t *testing.T, s string) {
		got := TypeScript(json.RawMessage(s))
		if got == "" {
			t.Fatal("empty type")
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 from %q: %q", s, got)
		}
		if len(got) > 64*len(s)+64 {
			t.Fatalf("%d bytes of type from %d bytes of schema", len(got), len(s))
		}
	})
}

// FuzzCapText: capText never returns more than max bytes, returns a prefix
// of its input, never splits a valid character, and says complete exactly
// when nothing was cut.
func FuzzCapText(f *testing.F) {
	f.Add([]byte("héllo 世界"), 4)
	f.Add([]byte{0xff, 0xe4, 0xb8}, 2)
	f.Add([]byte("abc"), 10)
	f.Fuzz(func(t *testing.T, b []byte, max int) {
		if max < 0 {
			max = -max
		}
		max %= len(b) + 4
		got, complete := capText(b, max)
		if len(got) > max || string(got) != string(b[:len(got)]) {
			t.Fatalf("capText(%q, %d) = %q", b, max, got)
		}
		if complete != (len(got) == len(b)) {
			t.Fatalf("complete %v for %d of %d bytes", complete, len(got), len(b))
		}
		if utf8.Valid(b) && !utf8.Valid(got) {
			t.Fatalf("split a character: %q", got)
		}
		if len(got) < max-3 && len(got) < len(b) {
			t.Fatalf("cut %d bytes short of %d", max-len(got), max)
		}
	})
}

// FuzzToolComment: a tool's comment is one line, at most maxToolComment
// bytes, valid UTF-8 when the input is, and a start of the folded input
// (up to the cut mark).
func FuzzToolComment(f *testing.F) {
	f.Add("bytes of the output's start to show (0: none); more. And more")
	f.Add(strings.Repeat("héllo wörld, ünïcödé everywhere in this description ", 5))
	f.Add("\xff\xfe broken")
	f.Fuzz(func(t *testing.T, s string) {
		got := toolComment(s)
		if len(got) > maxToolComment || strings.ContainsAny(got, "\n\r") {
			t.Fatalf("toolComment(%q) = %q", s, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("split a character: %q", got)
		}
		kept, _, _ := strings.Cut(got, "…(")
		if !strings.HasPrefix(oneLine(s), kept) {
			t.Fatalf("%q is not a start of %q", got, oneLine(s))
		}
	})
}

// FuzzColumnOf: any byte column gives a character column within the line.
func FuzzColumnOf(f *testing.F) {
	f.Add("const s = 'héllo'; const = 1", 30)
	f.Add("", -4)
	f.Fuzz(func(t *testing.T, line string, col int) {
		c := columnOf(line, col)
		if c < 1 || c > len(line)+1 {
			t.Fatalf("columnOf(%q, %d) = %d", line, col, c)
		}
	})
}
