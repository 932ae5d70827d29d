package codemode

import (
	"strings"
	"testing"
	"time"
)

// Where a script stopped by its timeout is said to have stopped: on the
// script's own line when goja knows it; at line 1, with no column, when
// the script is one line (it can only have stopped there); and nowhere
// when goja gives only the wrapper's position (a loop with an empty body,
// a promise job between awaits), rather than a line that may have done
// nothing.
func TestStopPositions(t *testing.T) {
	tests := []struct {
		name, code   string
		line, column int
		text         string // how Error() starts
	}{
		{"empty loop, one line", "while (true) {}", 1, 0, "codemode: line 1: the script ran past"},
		{"awaits, one line", "for (;;) await null;", 1, 0, "codemode: line 1: the script ran past"},
		{"one line and a trailing newline", "while (true) {}\n", 1, 0, "codemode: line 1: the script ran past"},
		{"awaits on line 2", "// a comment\nfor (;;) await null;", 0, 0, "codemode: the script ran past"},
		{"empty loop on line 2", "// x\nwhile (true) {}", 0, 0, "codemode: the script ran past"},
		{"empty loop after an empty line", "\nwhile (true) {}", 0, 0, "codemode: the script ran past"},
		{"loop with a body on line 2", "let n = 0;\nwhile (true) { n++ }", 2, 16, "codemode: line 2, column 16: the script ran past"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Run(t.Context(), tt.code, nil, Options{Timeout: 100 * time.Millisecond})
			e := res.Error
			if e == nil || e.Kind != "timeout" {
				t.Fatalf("error %+v, want a timeout", e)
			}
			if e.Line != tt.line || e.Column != tt.column || !strings.HasPrefix(e.Error(), tt.text) {
				t.Errorf("at %d:%d, %q; want %d:%d, %q...", e.Line, e.Column, e.Error(), tt.line, tt.column, tt.text)
			}
		})
	}
}
