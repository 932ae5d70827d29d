package codemode

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// Where a script stopped by its timeout is said to have stopped: on the
// script's own line. A loop whose test is constant or absent gets a
// position at its start on every turn (markLoop), so that one with an
// empty body, or a body of awaits, is not said to have stopped at the
// statement before it, which goja would otherwise name; stopped in its
// body, the body's position is given.
func TestStopPositions(t *testing.T) {
	tests := []struct {
		name, code string
		line       int
		columns    []int  // any of them
		text       string // how Error() starts
	}{
		{"empty loop, one line", "while (true) {}", 1, []int{1}, "codemode: line 1, column 1: the script ran past"},
		{"awaits, one line", "for (;;) await null;", 1, []int{1}, "codemode: line 1, column 1: the script ran past"}, // or 1:0 (between awaits)
		{"one line and a trailing newline", "while (true) {}\n", 1, []int{1}, "codemode: line 1, column 1: the script ran past"},
		{"awaits on line 2", "// a comment\nfor (;;) await null;", 2, []int{1}, "codemode: line 2, column 1: the script ran past"}, // or no line
		{"empty loop on line 2", "// x\nwhile (true) {}", 2, []int{1}, "codemode: line 2, column 1: the script ran past"},
		{"empty loop after an empty line", "\nwhile (true) {}", 2, []int{1}, "codemode: line 2, column 1: the script ran past"},
		// goja alone named line 1 for these, where nothing loops.
		{"empty loop after a statement", "const x: number = 1;\nwhile (true) {}", 2, []int{1}, "codemode: line 2, column 1: the script ran past"},
		{"awaits after a statement", "const x = 1;\nfor (;;) await null;", 2, []int{1}, "codemode: line 2, column 1: the script ran past"}, // or no line
		{"do-while after statements", "let a = 1;\nlet b = 2;\ndo {} while (1);", 3, []int{1}, "codemode: line 3, column 1: the script ran past"},
		{"loop with a body on line 2", "let n = 0;\nwhile (true) { n++ }", 2, []int{1, 16}, "codemode: line 2, column "},
		{"loop with a test", "let n = 0;\nwhile (n >= 0) {}", 2, []int{8}, "codemode: line 2, column 8: the script ran past"},
	}
	// The mark changes nothing a script does: before super() in a
	// derived class's constructor too, where this would throw.
	derived := "class A {}\nclass B extends A { constructor() { let i = 0; while (true) { if (++i > 3) break; } super(); } }\nnew B(); return 1"
	if res := Run(t.Context(), derived, nil, Options{}); res.Error != nil || string(res.Value) != "1" {
		t.Errorf("a loop before super(): %q, %v", res.Value, res.Error)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Run(t.Context(), tt.code, nil, Options{Timeout: 100 * time.Millisecond})
			e := res.Error
			if e == nil || e.Kind != "timeout" {
				t.Fatalf("error %+v, want a timeout", e)
			}
			if strings.HasPrefix(tt.name, "awaits") && e.Column == 0 && (e.Line == 0 || e.Line == 1 && !strings.Contains(tt.code, "\n")) {
				// Stopped between awaits, while a promise job resumed the
				// script: goja has no position there, and none is given
				// (a one-line script: its line).
				return
			}
			if e.Line != tt.line || !slices.Contains(tt.columns, e.Column) || !strings.HasPrefix(e.Error(), tt.text) {
				t.Errorf("at %d:%d, %q; want %d:%v, %q...", e.Line, e.Column, e.Error(), tt.line, tt.columns, tt.text)
			}
		})
	}
}
