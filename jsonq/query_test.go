package jsonq

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback/capture"
	"github.com/scrollback-dev/scrollback/present"
)

func run(t *testing.T, filter, data string, opts Options) (*Result, error) {
	t.Helper()
	f, err := Compile(filter)
	if err != nil {
		return nil, err
	}
	return Run(context.Background(), f, strings.NewReader(data), int64(len(data)), opts)
}

func TestRun(t *testing.T) {
	doc := `{"items":[{"id":1,"name":"a"},{"id":2,"name":"b"}],"summary":{"count":2,"ok":true}}`
	tests := []struct {
		name, filter, data, want string
		docs                     int
	}{
		{"identity compacts", ".", "{ \"a\" : [1, 2.5, \"x\"] }", `{"a":[1,2.5,"x"]}` + "\n", 1},
		{"length", ".items | length", doc, "2\n", 1},
		{"field", ".summary", doc, `{"count":2,"ok":true}` + "\n", 1},
		{"many results", ".items[].name", doc, "\"a\"\n\"b\"\n", 1},
		{"no results", "empty", doc, "", 1},
		{"JSON Lines", ".id", "{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n", "1\n2\n3\n", 3},
		{"JSON Lines CRLF", ".id", "{\"id\":1}\r\n{\"id\":2}\r\n", "1\n2\n", 2},
		{"concatenated documents", ".", `{"a":1}{"a":2}[3]"s"4`, "{\"a\":1}\n{\"a\":2}\n[3]\n\"s\"\n4\n", 5},
		{"select over lines", `select(.level == "error") | .msg`, "{\"level\":\"info\",\"msg\":\"x\"}\n{\"level\":\"error\",\"msg\":\"boom\"}\n", "\"boom\"\n", 2},
		{"big integer kept", ".", "123456789012345678901234567890", "123456789012345678901234567890\n", 1},
		{"float", ". * 2", "1.25", "2.5\n", 1},
		{"negative", ".", "[-0,-12,-1.5e3]", "[0,-12,-1500]\n", 1},
		{"escapes", ".", `"a\"b\\c\/d\n\u00e9\ud83d\ude00"`, `"a\"b\\c/d\né😀"` + "\n", 1},
		{"lone surrogate", ".", `"\ud800x"`, "\"\uFFFDx\"\n", 1},
		{"invalid UTF-8 shown as U+FFFD", ".", "\"a\xffb\"", "\"a\uFFFDb\"\n", 1},
		{"sorted keys as jq", "keys", `{"b":1,"a":2}`, `["a","b"]` + "\n", 1},
		{"duplicate key: last wins", ".a", `{"a":1,"a":2}`, "2\n", 1},
		{"empty copy", ".", "", "", 0},
		{"white space only", ".", " \n\t", "", 0},
		{"halt stops quietly", "1, halt, 2", "null", "1\n", 1},
		{"byte order mark skipped", ".a", "\xef\xbb\xbf{\"a\":1}", "1\n", 1},
		{"byte order mark before JSON Lines", ".id", "\xef\xbb\xbf{\"id\":1}\n{\"id\":2}\n", "1\n2\n", 2},
		{"byte order mark alone", ".", "\xef\xbb\xbf", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := run(t, tt.filter, tt.data, Options{Complete: true})
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Text) != tt.want || res.Documents != tt.docs || res.Stopped != -1 {
				t.Errorf("got %q (%d documents, stopped %d), want %q (%d documents)", res.Text, res.Documents, res.Stopped, tt.want, tt.docs)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	tests := []struct {
		name, filter, data string
		complete           bool
		err                error
		msg                []string
	}{
		{"bad filter", ".a | ", "{}", true, ErrFilter, []string{"unexpected EOF", "byte 5", "line 1, column 6"}},
		{"bad token", ".a ]", "{}", true, ErrFilter, []string{`unexpected token "]"`, "line 1"}},
		{"empty filter", "  ", "{}", true, ErrFilter, []string{"empty"}},
		{"unknown function", "nosuch(1)", "{}", true, ErrFilter, []string{"nosuch/1"}},
		{"input", "input", "{}", true, ErrFilter, []string{"input", "not available"}},
		{"inputs", "[.,inputs]", "{}", true, ErrFilter, []string{"inputs"}},
		{"env", "env.HOME", "{}", true, ErrFilter, []string{"env"}},
		{"$ENV", "$ENV.PATH", "{}", true, ErrFilter, []string{"$ENV"}},
		{"env inside a function", "def f: [env]; f", "{}", true, ErrFilter, []string{"env"}},
		{"import", `import "a" as a; .`, "{}", true, ErrFilter, nil},
		{"runtime error", ".a", "[1]", true, ErrRuntime, []string{"expected an object but got: array"}},
		{"error()", `error("nope")`, "1", true, ErrRuntime, []string{"nope"}},
		{"not JSON", ".", "hello world", true, ErrSyntax, []string{"byte 0 (line 1)", `"hello world"`}},
		{"bad on line 3", ".", "{\"a\":1}\n{\"a\":2}\n{\"a\":x}\n", true, ErrSyntax, []string{"byte 21 (line 3)", `"x}\n"`, "after 2 whole documents"}},
		{"missing comma", ".", `{"a":1 "b":2}`, true, ErrSyntax, []string{"byte 7", `","`}},
		{"trailing comma", ".", `[1,2,]`, true, ErrSyntax, []string{"byte 5"}},
		{"bad number", ".", `[01]`, true, ErrSyntax, []string{"not a JSON number"}},
		{"number without fraction digits", ".", `[0.]`, true, ErrSyntax, []string{"not a JSON number"}},
		{"number without exponent digits", ".", `1e+`, true, ErrSyntax, []string{"not a JSON number"}},
		{"lone minus", ".", `-`, true, ErrSyntax, []string{"not a JSON number"}},
		{"control char in string", ".", "\"a\tb\"", true, ErrSyntax, []string{"control"}},
		{"bad escape", ".", `"\x"`, true, ErrSyntax, []string{"backslash"}},
		{"complete but cut", ".", `{"a":[1,2`, true, ErrSyntax, []string{"ends"}},
		{"cut at the cap", ".", `{"a":[1,2`, false, ErrCut, []string{"cut at the cap", "byte 9"}},
		{"deep nesting", ".", deep, true, ErrSyntax, []string{"deeper than 1000"}},
		{"huge literal", ".", "[" + strings.Repeat("9", 100000) + "]", true, ErrSyntax, []string{"longer than 1000"}},
		{"deep result", "reduce range(2000) as $i (null; [.])", "null", true, ErrRuntime, []string{"deeper than 1000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run(t, tt.filter, tt.data, Options{Complete: tt.complete})
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			for _, m := range tt.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not say %q", err, m)
				}
			}
		})
	}
}

func TestIncompleteStream(t *testing.T) {
	data := "{\"id\":1}\n{\"id\":2}\n{\"id\":3,\"na"
	res, err := run(t, ".id", data, Options{Complete: false})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Text) != "1\n2\n" || res.Stopped != 18 || res.StopReason == "" {
		t.Errorf("got %q stopped at %d (%q)", res.Text, res.Stopped, res.StopReason)
	}
	// The same bytes in a copy said to be complete are an error.
	if _, err := run(t, ".id", data, Options{Complete: true}); !errors.Is(err, ErrSyntax) {
		t.Errorf("complete copy: err = %v, want ErrSyntax", err)
	}
}

func TestLimits(t *testing.T) {
	for _, filter := range []string{"last(range(1e18))", "[repeat(1)] | length", "def f: f; f"} {
		t.Run(filter, func(t *testing.T) {
			_, err := run(t, filter, "null", Options{Timeout: 100 * time.Millisecond, Complete: true})
			if !errors.Is(err, ErrTimeLimit) || !strings.Contains(err.Error(), "time limit (100ms)") {
				t.Fatalf("err = %v, want the time limit", err)
			}
		})
	}
	for _, filter := range []string{"repeat(1)", "range(1e18)", `. as $x | range(100) | $x`} {
		t.Run(filter, func(t *testing.T) {
			_, err := run(t, filter, `"`+strings.Repeat("x", 5000)+`"`, Options{MaxOutput: 1 << 16, Timeout: time.Minute, Complete: true})
			if !errors.Is(err, ErrOutputLimit) || !strings.Contains(err.Error(), "output limit (65536 bytes)") {
				t.Fatalf("err = %v, want the output limit", err)
			}
		})
	}
	// Exactly at the limit is allowed.
	res, err := run(t, "1,1", "null", Options{MaxOutput: 4, Complete: true})
	if err != nil || string(res.Text) != "1\n1\n" {
		t.Fatalf("got %q, %v", res.Text, err)
	}
}

// A filter that collects more than the memory limit is stopped, saying so.
func TestMemoryLimit(t *testing.T) {
	_, err := run(t, "[range(1e9)] | length", "null", Options{MaxMemory: 16 << 20, Timeout: time.Minute, Complete: true})
	if !errors.Is(err, ErrMemoryLimit) || !strings.Contains(err.Error(), "memory past the limit (16 MiB)") {
		t.Fatalf("err = %v, want the memory limit", err)
	}
}

// A parent context's cancellation is not reported as the time limit.
func TestCancel(t *testing.T) {
	f, _ := Compile("last(range(1e18))")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, f, strings.NewReader("null"), 4, Options{})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeLimit) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// Strings and numbers that straddle the parser's window are read whole.
func TestWindowBoundaries(t *testing.T) {
	for _, shift := range []int{0, 1, 2, 3, 5, 7} {
		var b bytes.Buffer
		b.WriteString(strings.Repeat(" ", window-4-shift))
		b.WriteString(`["ab\u00e9\ud83d\ude00cd", 123456789, true, "é"]`)
		res, err := run(t, ".", b.String(), Options{Complete: true})
		if err != nil {
			t.Fatalf("shift %d: %v", shift, err)
		}
		if want := "[\"abé😀cd\",123456789,true,\"é\"]\n"; string(res.Text) != want {
			t.Errorf("shift %d: got %q", shift, res.Text)
		}
	}
}

// captured is what capture retains of output under a copy cap of
// copyCap bytes: the whole output, or its head, a marker line and its
// tail.
func captured(output string, copyCap int64) capture.Result {
	c := capture.New(capture.Limits{Copy: copyCap})
	c.Stdout().Write([]byte(output))
	return c.Result()
}

// TestCutAtTheCap: one JSON document whose middle the copy cap dropped
// says that the copy was cut at the cap, where, and how much was
// dropped, not only that it is not valid JSON, wherever the cut falls:
// inside a string, a number, a literal, between tokens, at a line end of
// indented JSON. JSON Lines are filtered as far as their whole documents
// go, and the note says the cap was crossed there.
func TestCutAtTheCap(t *testing.T) {
	var recs []string
	for i := range 200 {
		recs = append(recs, fmt.Sprintf(`{"id":%d,"name":"rec %d é","ok":%v,"n":null,"x":%d.5e3,"tags":["a","b"]}`, i, i, i%2 == 0, i*7919))
	}
	minified := `{"items":[` + strings.Join(recs, ",") + `]}`
	var indented bytes.Buffer
	json.Indent(&indented, []byte(minified), "", "  ")
	for _, doc := range []struct {
		name, text string
	}{{"minified", minified}, {"indented", indented.String()}} {
		for copyCap := int64(600); copyCap < 900; copyCap++ {
			r := captured(doc.text, copyCap)
			if r.Complete {
				t.Fatalf("%s, cap %d: the copy is complete", doc.name, copyCap)
			}
			_, err := run(t, ".items | length", string(r.Copy), Options{Complete: false})
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrCut) {
				t.Fatalf("%s, cap %d (cut %q): err = %v, want ErrCut", doc.name, copyCap, r.Copy[max(0, r.Gap.Offset-10):r.Gap.Offset+20], err)
			}
			for _, want := range []string{
				"cut at the copy cap", fmt.Sprintf("cap of %d bytes", copyCap), fmt.Sprintf("%d bytes", r.Gap.Bytes),
				fmt.Sprintf("at byte %d", r.Gap.Offset+btoi(r.Copy[r.Gap.Offset] == '\n')), "incomplete",
			} {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("%s, cap %d: %q lacks %q", doc.name, copyCap, err, want)
				}
			}
			if strings.Contains(err.Error(), "not valid JSON") {
				t.Fatalf("%s, cap %d: %q still calls the copy not valid JSON", doc.name, copyCap, err)
			}
		}
	}
	// The same bytes said complete are not JSON: the marker is no
	// excuse when nothing was dropped.
	r := captured(minified, 700)
	if _, err := run(t, ".", string(r.Copy), Options{Complete: true}); !errors.Is(err, ErrSyntax) {
		t.Errorf("complete copy with a marker-like line: err = %v, want ErrSyntax", err)
	}
	// Text that only looks like a marker mid-line is not one.
	fake := `{"a":` + "\"x\"[scrollback: 5 bytes (0 lines) dropped here: the copy cap of 9 bytes was crossed]\n"
	if _, err := run(t, ".", fake, Options{Complete: false}); !errors.Is(err, ErrSyntax) {
		t.Errorf("a marker mid-line: err = %v, want ErrSyntax", err)
	}
	// Indented documents one after another: filtered up to the gap, which
	// the note names; nothing after it is a whole line to go on from.
	var pretty strings.Builder
	for i := range 60 {
		fmt.Fprintf(&pretty, "{\n  \"id\": %d,\n  \"name\": \"rec %d\"\n}\n", i, i)
	}
	r = captured(pretty.String(), 1000)
	res, err := run(t, ".id", string(r.Copy), Options{Complete: false})
	if err != nil || res.Stopped < 0 || res.Stopped > r.Gap.Offset+1 || len(res.Gaps) != 0 || !strings.Contains(res.StopReason, fmt.Sprintf("the copy cap was crossed there and %d bytes", r.Gap.Bytes)) {
		t.Errorf("cut indented stream: %+v, %v; want it stopped at the marker (%d) and said so", res, err, r.Gap.Offset)
	}
}

// TestJSONLinesAfterTheGap: a stream of JSON Lines whose middle a cap
// dropped is filtered on both sides of the gap: every whole line the copy
// kept, before and after the marker, and nothing else. Before, filtering
// stopped at the marker, and the newest records (the tail) were never
// queried.
func TestJSONLinesAfterTheGap(t *testing.T) {
	for _, tt := range []struct {
		name    string
		pad     int   // bytes of padding in each record
		cap     int64 // the copy cap
		skipped bool  // the tail starts inside a line, which is passed over
	}{
		{"short lines", 0, 2000, false},
		{"short lines, bigger cap", 10, 8000, false},
		{"lines longer than the tail's search for a line start", 3000, 20000, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			for i := range 400 {
				fmt.Fprintf(&out, `{"id":%d,"pad":"%s","tags":["a","b"]}`+"\n", i, strings.Repeat("é", tt.pad/2))
			}
			r := captured(out.String(), tt.cap)
			if r.Gap == nil {
				t.Fatal("no gap: the case does not test anything")
			}
			// The truth: the ids of the copy's lines that are whole records.
			var want []string
			var before int
			for _, line := range strings.Split(strings.TrimSuffix(string(r.Copy), "\n"), "\n") {
				var rec struct{ ID *int }
				if json.Unmarshal([]byte(line), &rec) == nil && rec.ID != nil {
					want = append(want, fmt.Sprint(*rec.ID))
				}
			}
			for _, line := range strings.Split(string(r.Copy[:r.Gap.Offset]), "\n") {
				if json.Valid([]byte(line)) && line != "" {
					before++
				}
			}
			res, err := run(t, ".id", string(r.Copy), Options{Complete: false})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Fields(string(res.Text)); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("ids %v\nwant %v", got, want)
			}
			if res.Stopped != -1 || len(res.Gaps) != 1 {
				t.Fatalf("stopped %d, gaps %+v: want one gap and the rest read", res.Stopped, res.Gaps)
			}
			g := res.Gaps[0]
			if g.Before != before || g.Marker.Bytes != r.Gap.Bytes || g.Marker.Cap != "copy" || (g.Skipped > 0) != tt.skipped {
				t.Errorf("gap %+v; want %d documents before it, %d bytes dropped, skipped %v", g, before, r.Gap.Bytes, tt.skipped)
			}
			if res.Documents != len(want) {
				t.Errorf("%d documents, want %d", res.Documents, len(want))
			}
		})
	}
	// A scalar right after the marker may be the rest of a cut one (a
	// number's last digits): passed over, and the next line taken.
	copyText := "1\n2\n" + present.GapMarker(10, 2, "copy", 20) + "45\n6\n7\n"
	res, err := run(t, ".", copyText, Options{Complete: false})
	if err != nil || string(res.Text) != "1\n2\n6\n7\n" || len(res.Gaps) != 1 || res.Gaps[0].Skipped != 3 {
		t.Errorf("scalars after the gap: %q, %+v, %v; want 1 2 6 7 with 45 passed over", res.Text, res.Gaps, err)
	}
}

func btoi(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// FuzzJSONLinesAfterTheGap: JSON Lines of random lengths captured under a
// random copy cap and filtered with .i give exactly the ids of the records
// the copy holds whole, before and after the gap: none made up from the
// rest of a cut line, none of a whole line missed, in order.
func FuzzJSONLinesAfterTheGap(f *testing.F) {
	f.Add(int64(1), uint16(300), uint16(2000), uint16(100))
	f.Add(int64(2), uint16(50), uint16(9000), uint16(4000))
	f.Add(int64(3), uint16(800), uint16(3000), uint16(7))
	filter, _ := Compile(".i")
	f.Fuzz(func(t *testing.T, seed int64, n, copyCap, maxLen uint16) {
		if n == 0 || copyCap < 512 {
			return
		}
		rng := rand.New(rand.NewSource(seed))
		var out strings.Builder
		var recs []string
		for i := range int(n) {
			s := strings.Repeat(string(rune('a'+rng.Intn(3))), rng.Intn(int(maxLen)+1))
			if rng.Intn(4) == 0 {
				s = strings.Repeat("é{\\\"", rng.Intn(int(maxLen)/4+1))
			}
			rec := fmt.Sprintf(`{"i":%d,"s":"%s"}`, i, s)
			recs = append(recs, rec)
			out.WriteString(rec + "\n")
		}
		r := captured(out.String(), int64(copyCap))
		res, err := Run(context.Background(), filter, bytes.NewReader(r.Copy), int64(len(r.Copy)), Options{Complete: r.Complete})
		if err != nil {
			t.Fatalf("cap %d: %v", copyCap, err)
		}
		var want []string
		for i, rec := range recs {
			at := bytes.Index(r.Copy, []byte(rec+"\n"))
			if at >= 0 && (at == 0 || r.Copy[at-1] == '\n') {
				want = append(want, fmt.Sprint(i))
			}
		}
		got := strings.Fields(string(res.Text))
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("cap %d, gaps %+v, stopped %d: ids %v, want %v", copyCap, res.Gaps, res.Stopped, got, want)
		}
	})
}
