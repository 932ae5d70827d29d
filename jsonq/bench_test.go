package jsonq

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

func benchDoc(size int) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"items":[`)
	for i := 0; buf.Len() < size-300; i++ {
		if i > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"id":%d,"name":"item-%d","status":%d,"tags":["a","b"],"price":%d.%02d,"owner":{"login":"user%d","admin":%v}}`,
			i, i, 200+i%5*100, i%1000, i%100, i%97, i%13 == 0)
	}
	buf.WriteString(`],"summary":{"count":0,"note":"end"}}`)
	return buf.Bytes()
}

// BenchmarkOutline8MiB: the outline of an 8 MiB document, made when such a
// copy is previewed.
func BenchmarkOutline8MiB(b *testing.B) {
	data := benchDoc(8 << 20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if o, ok := OutlineOf(data); !ok || o.Text(1024) == "" {
			b.Fatal("no outline")
		}
	}
}

// BenchmarkRun8MiB: .items | length over an 8 MiB document, parsing
// included.
func BenchmarkRun8MiB(b *testing.B) {
	data := benchDoc(8 << 20)
	f, err := Compile(".items | length")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Run(context.Background(), f, bytes.NewReader(data), int64(len(data)), Options{Complete: true}); err != nil {
			b.Fatal(err)
		}
	}
}
