package jsonq

import (
	"strings"
	"testing"

	"github.com/itchyny/gojq"
)

// Number literals out of float64's range read as gojq reads them (as jq
// 1.7 does): too large is the largest float, too small is 0.
func TestNumbersAsGojq(t *testing.T) {
	tests := []struct{ data, want string }{
		{"1e999", "1.7976931348623157e+308\n"},
		{"-1e999", "-1.7976931348623157e+308\n"},
		{"[1e999]", "[1.7976931348623157e+308]\n"},
		{"1E+400", "1.7976931348623157e+308\n"},
		{"1e-999", "0\n"},
		{"1.5e3", "1500\n"},
		{"123456789012345678901234567890", "123456789012345678901234567890\n"},
	}
	for _, tt := range tests {
		t.Run(tt.data, func(t *testing.T) {
			res, err := run(t, ".", tt.data, Options{Complete: true})
			if err != nil {
				t.Fatal(err)
			}
			got := string(res.Text)
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if lit := strings.Trim(tt.data, "[]"); lit == tt.data {
				if g := gojqReads(t, lit); got != g {
					t.Errorf("got %q, gojq reads %q", got, g)
				}
			}
		})
	}
}

// gojqReads is what gojq itself makes of the number literal s: its
// tonumber, which reads a literal as gojq reads its input.
func gojqReads(t *testing.T, s string) string {
	t.Helper()
	q, err := gojq.Parse("tonumber")
	if err != nil {
		t.Fatal(err)
	}
	v, _ := q.Run(s).Next()
	b, err := gojq.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b) + "\n"
}
