package utf8x

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// refLen is a reference decoder written from the table of RFC 3629,
// section 4, without the unicode/utf8 package: the length of the valid
// sequence at the start of b, or 1 when b starts with a byte that begins no
// valid sequence (stray continuation, truncated, overlong, surrogate, past
// U+10FFFF).
func refLen(b []byte) int {
	cont := func(i int, lo, hi byte) bool { return i < len(b) && b[i] >= lo && b[i] <= hi }
	c := b[0]
	switch {
	case c <= 0x7F:
		return 1
	case c >= 0xC2 && c <= 0xDF:
		if cont(1, 0x80, 0xBF) {
			return 2
		}
	case c == 0xE0:
		if cont(1, 0xA0, 0xBF) && cont(2, 0x80, 0xBF) {
			return 3
		}
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		if cont(1, 0x80, 0xBF) && cont(2, 0x80, 0xBF) {
			return 3
		}
	case c == 0xED:
		if cont(1, 0x80, 0x9F) && cont(2, 0x80, 0xBF) {
			return 3
		}
	case c == 0xF0:
		if cont(1, 0x90, 0xBF) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF) {
			return 4
		}
	case c >= 0xF1 && c <= 0xF3:
		if cont(1, 0x80, 0xBF) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF) {
			return 4
		}
	case c == 0xF4:
		if cont(1, 0x80, 0x8F) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF) {
			return 4
		}
	}
	return 1
}

// refBoundaries decodes b left to right and marks each offset where a
// character starts, and len(b).
func refBoundaries(b []byte) []bool {
	ok := make([]bool, len(b)+1)
	for i := 0; i < len(b); i += refLen(b[i:]) {
		ok[i] = true
	}
	ok[len(b)] = true
	return ok
}

// refValid is the valid form of b by the reference decoder.
func refValid(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		n := refLen(b[i:])
		if n == 1 && b[i] >= 0x80 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

func TestInside(t *testing.T) {
	tests := []struct {
		text       string
		pos        int
		inside     bool
		start, end int
	}{
		{"abc", 1, false, 0, 0},
		{"aéb", 2, true, 1, 3},
		{"aéb", 3, false, 0, 0},
		{"€", 1, true, 0, 3},
		{"€", 2, true, 0, 3},
		{"🙂", 3, true, 0, 4},
		{"🙂x", 4, false, 0, 0},
		{"\xe2\x82x", 1, false, 0, 0},    // truncated sequence: two one-byte characters
		{"\xed\xa0\x80", 1, false, 0, 0}, // surrogate: invalid bytes
		{"\xc0\xaf", 1, false, 0, 0},     // overlong
		{"\x80\x80\x80\x80", 2, false, 0, 0},
		{"é\x80", 2, false, 0, 0}, // stray continuation after a whole character
		{"", 0, false, 0, 0},
	}
	for _, tt := range tests {
		inside, start, end := Inside([]byte(tt.text), tt.pos)
		if inside != tt.inside || start != tt.start || end != tt.end {
			t.Errorf("Inside(%q, %d) = %v, %d, %d; want %v, %d, %d", tt.text, tt.pos, inside, start, end, tt.inside, tt.start, tt.end)
		}
	}
}

func TestCutEnd(t *testing.T) {
	tests := []struct {
		text  string
		limit int
		atEOF bool
		want  int
	}{
		{"abc", 2, true, 2},
		{"abc", 5, true, 3},
		{"abc", -1, true, 0},
		{"aé", 2, true, 1},
		{"aé", 3, true, 3},
		{"a€b", 2, false, 1},
		{"a\xe2\x82", 3, true, 3},  // invalid at the end of the text: one-byte characters
		{"a\xe2\x82", 3, false, 1}, // could still become € when more arrives
		{"a\xe2\x82", 2, false, 1},
		{"🙂🙂", 5, true, 4},
		{"\xff\xff", 1, false, 1},
	}
	for _, tt := range tests {
		if got := CutEnd([]byte(tt.text), tt.limit, tt.atEOF); got != tt.want {
			t.Errorf("CutEnd(%q, %d, %v) = %d, want %d", tt.text, tt.limit, tt.atEOF, got, tt.want)
		}
	}
}

func TestValid(t *testing.T) {
	for _, s := range []string{"", "abc", "é€🙂", "a\xffb", "\xe2\x82", "\xed\xa0\x80", "\xef\xbf\xbd", "\xf4\x90\x80\x80"} {
		got := AppendValid(nil, []byte(s))
		if want := refValid([]byte(s)); !bytes.Equal(got, want) {
			t.Errorf("AppendValid(%q) = %q, want %q", s, got, want)
		}
		if ValidLen([]byte(s)) != len(got) || ValidString([]byte(s)) != string(got) {
			t.Errorf("ValidLen/ValidString(%q) disagree with AppendValid", s)
		}
	}
}

// FuzzBoundaries compares Inside, CutEnd and AppendValid with the reference
// decoder. Invariants:
//   - Inside(window, base) reports inside exactly when pos is not a
//     boundary of the whole text, with the window holding only pos-3 to
//     pos+3, and then start and end are the boundaries just before and after;
//   - CutEnd(text[s:], limit, true) is the largest boundary <= s+limit (as an
//     offset from s), for any boundary s; with atEOF false and at least three
//     bytes past limit, the answer is the same;
//   - AppendValid gives the reference valid form, ValidLen its length.
func FuzzBoundaries(f *testing.F) {
	f.Add([]byte("aé€🙂\xff\xe2\x82x\xed\xa0\x80"), uint16(3), uint16(4))
	f.Add([]byte("\xf0\x9f\x99\x82\xf0\x9f"), uint16(1), uint16(2))
	f.Fuzz(func(t *testing.T, text []byte, p, l uint16) {
		ok := refBoundaries(text)
		pos := int(p) % (len(text) + 1)
		lo, hi := max(pos-3, 0), min(pos+3, len(text))
		inside, start, end := Inside(text[lo:hi], pos-lo)
		if inside == ok[pos] {
			t.Fatalf("Inside(%q, %d) = %v, boundary %v", text, pos, inside, ok[pos])
		}
		if inside {
			before, after := pos-1, pos+1
			for !ok[before] {
				before--
			}
			for !ok[after] {
				after++
			}
			if lo+start != before || lo+end != after {
				t.Fatalf("Inside(%q, %d): start %d end %d, want %d %d", text, pos, lo+start, lo+end, before, after)
			}
		}

		s := pos
		for !ok[s] {
			s--
		}
		limit := int(l) % (len(text) - s + 5)
		want := min(s+limit, len(text))
		for !ok[want] {
			want--
		}
		if got := CutEnd(text[s:], limit, true); s+got != want {
			t.Fatalf("CutEnd(%q, %d, true) = %d, want %d", text[s:], limit, got, want-s)
		}
		if s+limit+3 <= len(text) {
			if got := CutEnd(text[s:s+limit+3], limit, false); s+got != want {
				t.Fatalf("CutEnd(%q, %d, false) = %d, want %d", text[s:s+limit+3], limit, got, want-s)
			}
		}

		if got, want := AppendValid(nil, text), refValid(text); !bytes.Equal(got, want) || ValidLen(text) != len(want) {
			t.Fatalf("AppendValid(%q) = %q (ValidLen %d), want %q", text, got, ValidLen(text), want)
		}
		if !utf8.Valid(AppendValid(nil, text)) {
			t.Fatalf("AppendValid(%q) is not valid UTF-8", text)
		}
	})
}

func TestCutTail(t *testing.T) {
	tests := []struct {
		text      string
		n         int
		cut, tail string
	}{
		{"", 3, "", ""},
		{"abc", 5, "abc", "abc"},
		{"abc", -1, "", ""},
		{"héllo", 2, "h", "lo"},
		{"héllo", 3, "hé", "llo"},
		{"héllo", 4, "hél", "llo"},
		{"€€", 4, "€", "€"},
		{"€€", 5, "€", "€"},
		{"🙂x", 3, "", "x"},
		{"🙂x", 4, "🙂", "x"},
		{"\x80\x80\x80\x80", 2, "\x80\x80", "\x80\x80"}, // stray bytes are characters
		{"a\xe2\x82", 2, "a\xe2", "\xe2\x82"},           // so is a truncated sequence
		{"\xed\xa0\x80z", 2, "\xed\xa0", "\x80z"},       // and a surrogate's bytes
	}
	for _, tt := range tests {
		if got := Cut(tt.text, tt.n); got != tt.cut {
			t.Errorf("Cut(%q, %d) = %q, want %q", tt.text, tt.n, got, tt.cut)
		}
		if got := Cut([]byte(tt.text), tt.n); string(got) != tt.cut {
			t.Errorf("Cut([]byte(%q), %d) = %q, want %q", tt.text, tt.n, got, tt.cut)
		}
		if got := Tail(tt.text, tt.n); got != tt.tail {
			t.Errorf("Tail(%q, %d) = %q, want %q", tt.text, tt.n, got, tt.tail)
		}
	}
}

// FuzzCutTail checks Cut and Tail against the reference decoder: Cut(s, n)
// is the longest prefix of at most n bytes ending on a boundary, Tail(s, n)
// the longest suffix of at most n bytes starting on one, and the string and
// byte-slice forms agree.
func FuzzCutTail(f *testing.F) {
	f.Add([]byte("aé€🙂\xff\xe2\x82x\xed\xa0\x80"), uint16(3))
	f.Add([]byte("\xf0\x9f\x99\x82\xf0\x9f"), uint16(5))
	f.Fuzz(func(t *testing.T, text []byte, m uint16) {
		ok := refBoundaries(text)
		n := int(m) % (len(text) + 2)
		want := min(n, len(text))
		for !ok[want] {
			want--
		}
		if got := Cut(text, n); !bytes.Equal(got, text[:want]) {
			t.Fatalf("Cut(%q, %d) = %q, want %q", text, n, got, text[:want])
		}
		if got := Cut(string(text), n); got != string(text[:want]) {
			t.Fatalf("Cut(string %q, %d) = %q, want %q", text, n, got, text[:want])
		}
		start := max(len(text)-n, 0)
		for !ok[start] {
			start++
		}
		if got := Tail(string(text), n); got != string(text[start:]) {
			t.Fatalf("Tail(%q, %d) = %q, want %q", text, n, got, text[start:])
		}
	})
}
