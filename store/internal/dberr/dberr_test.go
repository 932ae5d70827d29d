package dberr

import (
	"errors"
	"io"
	"testing"
)

func TestFormat(t *testing.T) {
	kind := errors.New("sqlite: database is locked")
	for _, tc := range []struct {
		cause       error
		where, hint string
		want        string
	}{
		{io.EOF, "", "", "pg: op: EOF"},
		{io.EOF, "h:5432/db", "retry", "pg: op: EOF (h:5432/db); retry"},
		{errors.New("pg: refused"), "", "", "pg: op: refused"},
		{errors.New("store: database or disk is full"), "f.db", "", "pg: op: database or disk is full (f.db)"},
		{&Classified{Kind: kind, Cause: errors.New("database is locked (5)")}, "", "", "pg: op: sqlite: database is locked"},
		{&Classified{Kind: kind, Cause: io.EOF}, "", "", "pg: op: sqlite: database is locked: EOF"},
	} {
		if got := Format("pg", "op", tc.cause, tc.where, tc.hint); got != tc.want {
			t.Errorf("Format(%v) = %q, want %q", tc.cause, got, tc.want)
		}
	}
	c := &Classified{Kind: kind, Cause: io.EOF}
	if !errors.Is(c, kind) || !errors.Is(c, io.EOF) {
		t.Error("a classified error does not match its kind and its cause")
	}
}
