package mcpserver

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/scrollback-dev/scrollback"
)

func TestParseOutputRef(t *testing.T) {
	const id = "out_abcdefghijklmnopqrstuvwxyz"
	tests := []struct {
		in      string
		ok      bool
		bad     bool
		from    int64
		to      int64
		partial bool
	}{
		{"scrollback://output/" + id, true, false, 0, -1, false},
		{"scrollback://output/" + id + "#bytes=10-20", true, false, 10, 20, false},
		{"scrollback://output/" + id + "#bytes=10-", true, false, 10, -1, false},
		{"scrollback://output/" + id + "#allow-incomplete", true, false, 0, -1, true},
		{"scrollback://output/" + id + "#bytes=0-4096#allow-incomplete", true, false, 0, 4096, true},
		{"scrollback://output/" + id + "#bytes=-5", true, true, 0, 0, false},
		{"scrollback://output/" + id + "#bytes=5", true, true, 0, 0, false},
		{"scrollback://output/" + id + "#bytes=a-b", true, true, 0, 0, false},
		{"scrollback://output/" + id + "#bytes=+1-2", true, true, 0, 0, false},
		{"scrollback://output/" + id + "#lines=1-2", true, true, 0, 0, false},
		{"scrollback://output/" + id + "#allow-incomplete#bytes=1-2", true, true, 0, 0, false},
		{"scrollback://output/", false, false, 0, 0, false},
		{"scrollback://output/" + id + " and more", false, false, 0, 0, false},
		{"scrollback://output/../etc/passwd", false, false, 0, 0, false},
		{"see scrollback://output/" + id, false, false, 0, 0, false},
		{"scrollback://outputs/" + id, false, false, 0, 0, false},
		{"", false, false, 0, 0, false},
	}
	for _, tt := range tests {
		ref, ok, err := ParseOutputRef(tt.in)
		if ok != tt.ok || (err != nil) != tt.bad {
			t.Errorf("%q: ok %v err %v; want ok %v bad %v", tt.in, ok, err, tt.ok, tt.bad)
			continue
		}
		if err != nil {
			if !errors.Is(err, scrollback.ErrArgument) || !strings.Contains(err.Error(), "#bytes=A-B") {
				t.Errorf("%q: error %v does not say what is right", tt.in, err)
			}
			continue
		}
		if ok && (ref.ID != id || ref.From != tt.from || ref.To != tt.to || ref.AllowIncomplete != tt.partial) {
			t.Errorf("%q: %+v", tt.in, ref)
		}
	}
}

// FuzzParseOutputRef: whatever the string, ParseOutputRef does not panic,
// a reference's id is a prefix-free part of the string, and an accepted
// reference prints back to a string that parses the same.
func FuzzParseOutputRef(f *testing.F) {
	f.Add("scrollback://output/out_x#bytes=1-2#allow-incomplete")
	f.Add("scrollback://output/out_x#bytes=99999999999999999999-")
	f.Fuzz(func(t *testing.T, s string) {
		ref, ok, err := ParseOutputRef(s)
		if !ok || err != nil {
			return
		}
		if !strings.HasPrefix(s, OutputURI(ref.ID)) || ref.From < 0 || ref.To < -1 {
			t.Fatalf("%q: %+v", s, ref)
		}
		again := OutputURI(ref.ID)
		if ref.From != 0 || ref.To >= 0 {
			again += "#bytes=" + strconv.FormatInt(ref.From, 10) + "-"
			if ref.To >= 0 {
				again += strconv.FormatInt(ref.To, 10)
			}
		}
		if ref.AllowIncomplete {
			again += "#allow-incomplete"
		}
		if r2, ok, err := ParseOutputRef(again); !ok || err != nil || r2 != ref {
			t.Fatalf("%q parsed to %+v, printed %q, parsed again to %+v %v %v", s, ref, again, r2, ok, err)
		}
	})
}
