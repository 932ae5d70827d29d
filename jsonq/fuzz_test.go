package jsonq

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzRun checks the parser against encoding/json: a copy encoding/json
// accepts as one document gives "." back as the same value; anything else
// gives an error or results, never a panic; an error for a copy names an
// offset inside it.
func FuzzRun(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":[1,2,{"c":"d"}],"e":{"f":null}}`, `[1,"2",[3],{"4":5}]`, `"\ud83d\ude00\ud800"`,
		"{}\n{}\n", "not json", `{"a":}`, `[1e5,-0.5,1E+2,123456789012345678901]`, "\"\xff\"", "[[[[[]]]]]",
	} {
		f.Add([]byte(s))
	}
	id, _ := Compile(".")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, complete := range []bool{true, false} {
			res, err := Run(context.Background(), id, bytes.NewReader(data), int64(len(data)), Options{Complete: complete})
			var e *Error
			if err != nil {
				if !errors.As(err, &e) {
					t.Fatalf("error of another type: %v", err)
				}
				if (e.Err == ErrSyntax || e.Err == ErrCut) && (e.Offset < 0 || e.Offset > int64(len(data)) || e.Line < 1) {
					t.Fatalf("error at offset %d line %d of a %d-byte copy", e.Offset, e.Line, len(data))
				}
			}
			if !complete || !json.Valid(data) {
				continue
			}
			var want any
			if json.Unmarshal(data, &want) != nil {
				continue
			}
			if err != nil {
				if e.Err == ErrSyntax && (bytes.Contains([]byte(e.Msg), []byte("deeper than")) || bytes.Contains([]byte(e.Msg), []byte("number"))) {
					continue // bounds encoding/json does not have
				}
				t.Fatalf("encoding/json accepts %q, Run says %v", data, err)
			}
			var got any
			if err := json.Unmarshal(res.Text, &got); err != nil || res.Results != 1 {
				t.Fatalf("result %q: %v", res.Text, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("for %q got %#v, want %#v", data, got, want)
			}
		}
	})
}
