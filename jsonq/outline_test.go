package jsonq

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestOutline(t *testing.T) {
	doc := `{"items": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3}],
 "odd key": "x", "n": null, "summary": {"count": 3, "ok": true}}`
	o, ok := OutlineOf([]byte(doc))
	if !ok || o.Documents != 1 {
		t.Fatalf("no outline for %s", doc)
	}
	text := o.Text(1024)
	for _, want := range []string{
		"JSON object of 4 keys, 135 bytes:\n",
		"  .items: array of 3, at 10, 59 bytes\n",
		"    .items[0]: object of 2 keys, at 11, 22 bytes\n",
		"    .items[2]: object of 1 key, at 59, 9 bytes\n",
		`  ."odd key": string, at 83, 3 bytes` + "\n",
		"  .n: null, at 93, 4 bytes\n",
		"  .summary: object of 2 keys, at 110, 24 bytes\n",
		"    .summary.count: number, at 120, 1 byte\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("outline lacks %q:\n%s", want, text)
		}
	}
	checkOutline(t, []byte(doc), o)

	for _, notJSON := range []string{"", "hello", "42", `"just a string"`, "{", `{"a":1} trailing`, "[1,2,]", "{'a':1}", "[1]\x00"} {
		if _, ok := OutlineOf([]byte(notJSON)); ok {
			t.Errorf("outline for %q, which is not a JSON document", notJSON)
		}
	}
	o, ok = OutlineOf([]byte("{\"a\":1,\"b\":{\"c\":[1]}}\n{\"a\":2}\n{\"a\":3}\n"))
	want := "JSON Lines: a stream of 3 documents; a filter runs on each. The first, object of 2 keys, 21 bytes:\n" +
		"  .a: number, at 5, 1 byte\n  .b: object of 1 key, at 11, 9 bytes\n"
	if text := o.Text(1024); !ok || o.Documents != 3 || text != want {
		t.Errorf("JSON Lines: %v %q", ok, text)
	}
}

// A large document's outline stays within its budget and counts what it
// leaves out.
func TestOutlineBudget(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("{")
	for i := range 500 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"key_` + strings.Repeat("k", i%30) + `":{"a":[1,2,3],"b":"x"}`)
	}
	b.WriteString("}")
	o, ok := OutlineOf(b.Bytes())
	if !ok {
		t.Fatal("no outline")
	}
	text := o.Text(1024)
	if len(text) > 1024 || !strings.Contains(text, "more members of the root not listed") {
		t.Errorf("%d bytes:\n%s", len(text), text)
	}
	checkOutline(t, b.Bytes(), o)
}

// checkOutline tests that the outline never lies: the bytes at each
// entry's offset are the value at its path, whole.
func checkOutline(t *testing.T, data []byte, o Outline) {
	t.Helper()
	if o.Documents != 1 {
		return
	}
	var whole any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&whole); err != nil {
		t.Fatalf("outline of a copy encoding/json rejects: %v", err)
	}
	for _, e := range o.Entries {
		if e.Offset < 0 || e.Size <= 0 || e.Offset+e.Size > int64(len(data)) {
			t.Fatalf("entry %v out of range", e)
		}
		part := data[e.Offset : e.Offset+e.Size]
		var got any
		d := json.NewDecoder(bytes.NewReader(part))
		d.UseNumber()
		if err := d.Decode(&got); err != nil || d.InputOffset() != int64(len(part)) {
			t.Fatalf("entry %s: bytes %q at %d are not one JSON value: %v", PathString(e.Path), part, e.Offset, err)
		}
		want := whole
		for _, k := range e.Path {
			switch k := k.(type) {
			case string:
				want = want.(map[string]any)[k]
			case int:
				want = want.([]any)[k]
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("entry %s at %d: the bytes there hold %v, the document has %v", PathString(e.Path), e.Offset, got, want)
		}
		if e.Depth != len(e.Path) {
			t.Fatalf("entry %v: depth %d for a path of %d", e, e.Depth, len(e.Path))
		}
	}
}

// deep reports whether data nests brackets deeper than MaxDepth (counting
// brackets inside strings too: an over-estimate).
func deep(data []byte) bool {
	n := 0
	for _, c := range data {
		if c == '[' || c == '{' {
			if n++; n > MaxDepth-1 {
				return true
			}
		} else if c == ']' || c == '}' {
			n--
		}
	}
	return false
}

// checkStructure is checkOutline for a copy that is not valid JSON deep
// inside (OutlineOf does not check scalars below the levels it shows):
// each entry's bytes still start and end like a value of its kind, and a
// member of an object follows its key and a colon.
func checkStructure(t *testing.T, data []byte, o Outline) {
	t.Helper()
	for _, e := range o.Entries {
		if e.Offset < 0 || e.Size <= 0 || e.Offset+e.Size > int64(len(data)) {
			t.Fatalf("entry %v out of range", e)
		}
		v := data[e.Offset : e.Offset+e.Size]
		first, last := v[0], v[len(v)-1]
		ok := false
		switch e.Kind {
		case "object":
			ok = first == '{' && last == '}'
		case "array":
			ok = first == '[' && last == ']'
		case "string":
			ok = first == '"' && last == '"' && len(v) >= 2
		case "number":
			_, _, ok = numberEnd(v)
		case "boolean":
			ok = string(v) == "true" || string(v) == "false"
		case "null":
			ok = string(v) == "null"
		}
		if !ok {
			t.Fatalf("entry %s (%s) at %d holds %q", PathString(e.Path), e.Kind, e.Offset, v)
		}
		if len(e.Path) == 0 {
			continue
		}
		j := e.Offset - 1
		for j >= 0 && bytes.IndexByte([]byte(" \n\r\t"), data[j]) >= 0 {
			j--
		}
		want := byte(':') // a member of an object follows its key's colon
		if _, index := e.Path[len(e.Path)-1].(int); index {
			want = ','
			if e.Path[len(e.Path)-1] == 0 {
				want = '['
			}
		}
		if j < 0 || data[j] != want {
			t.Fatalf("entry %s at %d does not follow %q", PathString(e.Path), e.Offset, want)
		}
	}
}

func FuzzOutline(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":[1,2,{"c":"d"}],"e":{"f":null}}`, `[1,"2",[3],{"4":5}]`, `{"a\"b":{"\u00e9":[true,false]}}`,
		" [ ] ", "{}\n{}\n", "not json", `{"a":}`, `[1e5,-0.5,1E+2]`, "{\"a\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o, ok := OutlineOf(data)
		if !ok {
			if json.Valid(data) && MayBeJSON(data) && !deep(data) {
				t.Fatalf("no outline for valid JSON %q", data)
			}
			return
		}
		if o.Documents == 1 && json.Valid(data) {
			checkOutline(t, data, o)
		} else {
			checkStructure(t, data, o)
		}
		if text := o.Text(1024); len(text) > 1024+200 {
			t.Fatalf("outline text of %d bytes", len(text))
		}
	})
}

// A root array's outline shows its first and last elements and counts
// those between, as for an array below the root; past the elements an
// outline records, the last is counted too.
func TestOutlineRootArray(t *testing.T) {
	array := func(n int) []byte {
		var b bytes.Buffer
		b.WriteString("[")
		for i := range n {
			if i > 0 {
				b.WriteString(",\n ")
			}
			b.WriteString(`{"n":` + strconv.Itoa(i) + `}`)
		}
		b.WriteString("]")
		return b.Bytes()
	}
	for _, tt := range []struct {
		n    int
		want string
	}{
		{1, "JSON array of 1, 9 bytes:\n  .[0]: object of 1 key, at 1, 7 bytes\n    .[0].n: number, at 6, 1 byte\n"},
		{2, "JSON array of 2, 19 bytes:\n  .[0]: object of 1 key, at 1, 7 bytes\n    .[0].n: number, at 6, 1 byte\n" +
			"  .[1]: object of 1 key, at 11, 7 bytes\n    .[1].n: number, at 16, 1 byte\n"},
		{3, "JSON array of 3, 29 bytes:\n  .[0]: object of 1 key, at 1, 7 bytes\n    .[0].n: number, at 6, 1 byte\n" +
			"  ... 1 more element\n  .[2]: object of 1 key, at 21, 7 bytes\n    .[2].n: number, at 26, 1 byte\n"},
		{500, "JSON array of 500, 5889 bytes:\n  .[0]: object of 1 key, at 1, 7 bytes\n    .[0].n: number, at 6, 1 byte\n" +
			"  ... 498 more elements\n  .[499]: object of 1 key, at 5879, 9 bytes\n    .[499].n: number, at 5884, 3 bytes\n"},
		{1500, "JSON array of 1500, 18389 bytes:\n  .[0]: object of 1 key, at 1, 7 bytes\n    .[0].n: number, at 6, 1 byte\n" +
			"  ... 1499 more members of the root not listed\n"},
	} {
		data := array(tt.n)
		o, ok := OutlineOf(data)
		if !ok {
			t.Fatalf("%d elements: no outline", tt.n)
		}
		if got := o.Text(1024); got != tt.want {
			t.Errorf("%d elements:\n%s\nwant\n%s", tt.n, got, tt.want)
		}
		checkOutline(t, data, o)
	}
}
