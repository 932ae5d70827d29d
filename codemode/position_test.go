package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestErrorPositions: an error's line and column are in the code as
// written, whatever esbuild did to it (types stripped, strings escaped,
// spacing changed), and the column counts characters, not bytes or
// UTF-16 units.
func TestErrorPositions(t *testing.T) {
	tests := []struct {
		name, code   string
		line, column int
	}{
		{"second line", "const x = 1;\nundefinedName.f();", 2, 1},
		{"after a statement", "const x = 1; undefinedName.f();", 1, 14},
		{"types before, TypeScript", "const x: number = 1;\nconst y: string = 'a'; undefinedName.f();", 2, 24},
		{"types on the line", "const a: Record<string, number> = {}; undefinedName.f();", 1, 39},
		{"multi-byte text before", "const s = 'héllo wörld ✓'; undefinedName.f();", 1, 28},
		{"multi-byte and types", "const s: string = 'héllo wörld ✓'; undefinedName.f();", 1, 36},
		{"emoji before a throw", "const t = '😀'; throw new Error('x')", 1, 22},
		{"emoji and types before a throw", "const t: string = '😀'; throw new Error('x')", 1, 30},
		{"types lines removed", "type T = {a: number};\ninterface I { b: string }\nconst s: T = {a: 1}; throw new Error('x')", 3, 28},
		{"rejected after types", "enum E { A }\nconst s: string = 'ü'; await Promise.reject(new Error('r'))", 2, 45},
		{"null on the second line", "const o: any = null;\no.f();", 2, 1},
		{"CJK and emoji and types", "const s: string = '日本語'; const t = '😀'; throw new Error('x')", 1, 47},
		{"CJK and emoji", "const s = '日本語'; const t = '😀'; throw new Error('x')", 1, 39},
		{"null after multi-byte", "const s = 'ü', o = null; o.f();", 1, 26},
		{"what goja lacks, after types", "const s: string = 'ü'; return /a/v.test('a')", 1, 31},
		{"a failing call handled by then only", "const a = 1;\n  await tools.fail({}).then(r => r)", 2, 19},
		{"a failing call in Promise.all", "const a = 1;\nawait Promise.all([tools.echo({}),\n  tools.fail({})])", 3, 13},
		// U+2028 and U+2029 end a line for JavaScript (and esbuild's
		// source map), not for the model, whose lines end at "\n".
		{"line separator in a string before", "const s = 'a\u2028b';\nundefinedName.f();", 2, 1},
		{"paragraph separator in a comment before", "/* a\u2029b */\nconst x = 1; undefinedName.f();", 2, 14},
		{"line separator in a template, same line", "const s = `a\u2028b`; undefinedName.f();", 1, 18},
		// goja gives a call on a null or undefined literal no position of
		// its own: it was reported at the statement before.
		{"method of null on the second line", "const a = 1;\nnull.x();", 2, 1},
		{"method of undefined, indented", "const a = 1;\n  undefined.x();", 2, 3},
		{"bracketed method of null", "const a = 1;\nconst b = 2; null['x']();", 2, 14},
		{"in a typed arrow", "const f = (a: number): number => { return undefinedName };\nf(1)", 1, 43},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Run(t.Context(), tt.code, []Tool{echoTool(), {Name: "fail", Call: func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, errors.New("fail: nope") }}}, Options{})
			if res.Error == nil {
				t.Fatal("no error")
			}
			if res.Error.Line != tt.line || res.Error.Column != tt.column {
				t.Errorf("at %d:%d (%s), want %d:%d", res.Error.Line, res.Error.Column, res.Error.Message, tt.line, tt.column)
			}
		})
	}
}

// FuzzSourceMap: whatever the code, a position mapped back through
// esbuild's source map is on a line of the wrapped code and within it
// (a character column at most its length).
func FuzzSourceMap(f *testing.F) {
	for _, s := range []string{"const x: number = 1;\nnull.f()", "const s = 'a\u2028b';\r\nundefinedName.f()\r", "const s = '😀日本'; throw new Error('x')", "enum E { A }\nreturn E.A", "@dec class A {}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		js, m, e := transpile(code)
		if e != nil {
			return
		}
		wrapped := strings.Split(wrapHead+code+wrapTail, "\n")
		for i, line := range strings.Split(js, "\n") {
			for col := 0; col <= len(line); col++ {
				p, ok := m.original(i+1, col)
				if !ok {
					continue
				}
				if p.line < 1 || p.line > len(wrapped) || p.column < 0 || p.column > utf8.RuneCountInString(wrapped[p.line-1]) {
					t.Fatalf("%d:%d maps to %d:%d, outside the wrapped code", i+1, col, p.line, p.column)
				}
			}
		}
	})
}

// TestSyntaxErrorAtTheEnd: code that ends too early (an unclosed
// template, string, comment or bracket, an unfinished expression) is
// found by esbuild only in the wrapper's closing line, which the model
// never wrote. The error is at the end of the script as written (its
// last line with text), not at the wrapper's column on some line of the
// script, and does not blame the wrapper's "}" or ")".
func TestSyntaxErrorAtTheEnd(t *testing.T) {
	tests := []struct {
		name, code   string
		line, column int
		says         string
	}{
		{"after a line separator in a string", "const s = 'a\u2028b';\nconst = 1;", 2, 7, "SyntaxError"},
		{"unclosed template, one line", "const s = `abc", 1, 15, "end of the script"},
		{"unclosed template, TypeScript", "const n: number = 1;\nconst s: string = `a${n", 2, 24, "end of the script"},
		{"unclosed template, newline after", "const s = `abc\n", 1, 15, "end of the script"},
		{"unclosed comment", "const a = 1;\n/* abc\n\n", 2, 7, "multi-line comment starts here: line 2, column 1"},
		{"unclosed array", "const x = [1,\n2,\n", 2, 3, "end of the script"},
		{"unclosed block", "if (x) {\n  y();\n", 2, 7, "end of the script"},
		{"unfinished expression", "return 1 +", 1, 11, "end of the script"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Run(t.Context(), tt.code, nil, Options{})
			e := res.Error
			if e == nil || e.Kind != "syntax" {
				t.Fatalf("error %+v, want a syntax error", e)
			}
			if e.Line != tt.line || e.Column != tt.column {
				t.Errorf("at %d:%d (%s), want %d:%d", e.Line, e.Column, e.Message, tt.line, tt.column)
			}
			if !strings.Contains(e.Message, tt.says) {
				t.Errorf("message %q does not say %q", e.Message, tt.says)
			}
			if strings.Contains(e.Message, `Unexpected "}"`) || strings.Contains(e.Message, `Unexpected ")"`) {
				t.Errorf("message %q blames the wrapper's closing", e.Message)
			}
		})
	}
}
