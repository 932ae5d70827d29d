package jsonq

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// An error the filter raises is bounded: error(.) of a large document is
// not repeated whole in the message.
func TestRaisedErrorBounded(t *testing.T) {
	big := `{"k":"` + strings.Repeat("é", 300000) + `"}`
	for _, filter := range []string{"error(.)", "error(.k)", `error(.k + "x")`} {
		t.Run(filter, func(t *testing.T) {
			_, err := run(t, filter, big, Options{Complete: true})
			if !errors.Is(err, ErrRuntime) {
				t.Fatalf("err = %v, want ErrRuntime", err)
			}
			var je *Error
			if !errors.As(err, &je) {
				t.Fatalf("err %T is not an *Error", err)
			}
			if len(je.Msg) > maxRaised+len("the filter failed: ") {
				t.Errorf("message is %d bytes, want at most %d", len(je.Msg), maxRaised)
			}
			if !utf8.ValidString(je.Msg) {
				t.Errorf("message is not valid UTF-8 (cut inside a character)")
			}
			if !strings.Contains(je.Msg, "bytes cut)") {
				t.Errorf("message %q does not say it was cut", je.Msg[:min(len(je.Msg), 200)])
			}
		})
	}
	// A short one is left whole.
	_, err := run(t, `error("nope")`, "1", Options{Complete: true})
	if err == nil || strings.Contains(err.Error(), "cut") || !strings.Contains(err.Error(), "error: nope") {
		t.Fatalf("err = %v", err)
	}
}

// An error raised with error(...) says that try ... catch handles it; a
// type error says to guard the step instead.
func TestRaisedErrorHint(t *testing.T) {
	tests := []struct {
		filter, data, hint string
	}{
		{`error("nope")`, "1", "try"},
		{`error({a:1})`, "1", "try"},
		{`.[] | if . > 1 then error("big") else . end`, "[1,2]", "try"},
		{".a", "[1]", ".items[]?"},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			_, err := run(t, tt.filter, tt.data, Options{Complete: true})
			var je *Error
			if !errors.As(err, &je) || !errors.Is(err, ErrRuntime) {
				t.Fatalf("err = %v, want ErrRuntime", err)
			}
			if !strings.Contains(je.Hint, tt.hint) {
				t.Errorf("hint %q does not say %q", je.Hint, tt.hint)
			}
		})
	}
	// try ... catch does handle it: the hint is right.
	res, err := run(t, `try error("nope") catch .`, "1", Options{Complete: true})
	if err != nil || string(res.Text) != `"nope"`+"\n" {
		t.Fatalf("try/catch: %v, %v", res, err)
	}
}
