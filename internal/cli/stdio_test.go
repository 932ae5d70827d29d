package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"
)

// guard runs input through a guardReader and returns what it passed on
// and what it answered.
func guard(t testing.TB, input io.Reader, max int) (passed, answered []string) {
	t.Helper()
	var ans bytes.Buffer
	out, err := io.ReadAll(newGuardReader(input, &ans, max))
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.Lines(string(out)) {
		passed = append(passed, strings.TrimSuffix(l, "\n"))
	}
	for l := range strings.Lines(ans.String()) {
		answered = append(answered, strings.TrimSuffix(l, "\n"))
	}
	return passed, answered
}

func TestGuardReader(t *testing.T) {
	const ping = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, tc := range []struct {
		name, in string
		passed   []string
		answered []string // substrings, one a line
	}{
		{"good lines", ping + "\n" + ping + "\n", []string{ping, ping}, nil},
		{"no final newline", ping, []string{ping}, nil},
		{"crlf", ping + "\r\n", []string{ping + "\r"}, nil},
		{"blank lines", "\n  \n" + ping + "\n\n", []string{ping}, nil},
		{"long blank line", strings.Repeat(" \t", 100) + "\r\n" + ping + "\n" + strings.Repeat(" ", 300), []string{ping}, nil},
		{"non-JSON space", "\u00a0\n\v\n" + ping + "\n", []string{ping}, []string{`"code":-32700`, `"code":-32700`}},
		{"garbage", "garbage{{{\n" + ping + "\n", []string{ping}, []string{`"id":null,"error":{"code":-32700,"message":"parse error: invalid character 'g'`}},
		{"cut short", `{"jsonrpc":"2.0","id":1` + "\n" + ping, []string{ping}, []string{`"id":null,"error":{"code":-32700`}},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\xc3\"}\n" + ping, []string{ping}, []string{`not valid UTF-8 (byte 35)`}},
		{"batch", "[" + ping + "]\n" + ping, []string{ping}, []string{`"id":null,"error":{"code":-32600`}},
		{"a number", "42\n" + ping, []string{ping}, []string{`"code":-32600`}},
		{"no version", `{"id":"a","method":"ping"}` + "\n" + ping, []string{ping}, []string{`"id":"a","error":{"code":-32600,"message":"invalid request: invalid message version tag`}},
		{"object id", `{"id":{"x":1},"method":"ping"}` + "\n", nil, []string{`"id":null,"error":{"code":-32600`}},
		{"too long", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("x", 200) + `"}}` + "\n" + ping, []string{ping}, []string{`"id":null,"error":{"code":-32700,"message":"parse error: a line of 258 bytes, over the limit of 128 bytes`}},
		{"too long at the end", strings.Repeat("x", 300), nil, []string{`a line of 300 bytes`}},
	} {
		passed, answered := guard(t, strings.NewReader(tc.in), 128)
		if strings.Join(passed, "|") != strings.Join(tc.passed, "|") {
			t.Errorf("%s: passed %q, want %q", tc.name, passed, tc.passed)
		}
		if len(answered) != len(tc.answered) {
			t.Errorf("%s: answered %q, want %d lines", tc.name, answered, len(tc.answered))
			continue
		}
		for i, want := range tc.answered {
			if !strings.Contains(answered[i], want) {
				t.Errorf("%s: answer %q, want it to contain %q", tc.name, answered[i], want)
			}
			if !json.Valid([]byte(answered[i])) {
				t.Errorf("%s: answer %q is not JSON", tc.name, answered[i])
			}
		}
	}
}

// repeatReader yields n bytes of c.
type repeatReader struct {
	c byte
	n int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.n)]
	for i := range p {
		p[i] = r.c
	}
	r.n -= int64(len(p))
	return len(p), nil
}

// TestGuardReaderHugeLine: a line of 100 MiB is dropped with its error,
// holding no more than the limit, and the next line is passed on.
func TestGuardReaderHugeLine(t *testing.T) {
	const ping = `{"jsonrpc":"2.0","id":9,"method":"ping"}`
	in := io.MultiReader(strings.NewReader(`{"x":"`), &repeatReader{'a', 100 << 20}, strings.NewReader("\"}\n"+ping+"\n"))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	passed, answered := guard(t, in, 1<<20)
	runtime.ReadMemStats(&after)
	if len(passed) != 1 || passed[0] != ping || len(answered) != 1 || !strings.Contains(answered[0], "a line of 104857608 bytes") {
		t.Errorf("passed %q, answered %q", passed, answered)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("allocated %d bytes for a 100 MiB line with a 1 MiB limit", grew)
	}
}

// FuzzGuardReader: whatever the input, every line passed on is one JSON
// object in UTF-8, passed whole; every other non-blank line gets exactly
// one answer, itself JSON.
func FuzzGuardReader(f *testing.F) {
	f.Add([]byte("garbage{{{\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"))
	f.Add([]byte("[1]\n\xff\n{\"id\":1}\n\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		passed, answered := guard(t, bytes.NewReader(in), 64)
		var lines []string
		sc := bufio.NewScanner(bytes.NewReader(in))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if !isJSONSpace(sc.Bytes()) {
				lines = append(lines, sc.Text())
			}
		}
		if len(passed)+len(answered) != len(lines) {
			t.Fatalf("%d lines in, %d passed + %d answered", len(lines), len(passed), len(answered))
		}
		j := 0
		for _, p := range passed {
			for j < len(lines) && lines[j] != p {
				j++
			}
			if j == len(lines) {
				t.Fatalf("passed %q, not a line of the input in order", p)
			}
			j++
			var m map[string]any
			if len(p) > 65 || json.Unmarshal([]byte(p), &m) != nil {
				t.Fatalf("passed %q", p)
			}
		}
		for _, a := range answered {
			if !json.Valid([]byte(a)) {
				t.Fatalf("answer %q is not JSON", a)
			}
		}
	})
}
