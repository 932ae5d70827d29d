package capture

import (
	"bytes"
	"testing"
)

// FuzzCapture writes random bytes in random chunks to random streams
// through a Capture with small random Limits, and checks the invariants:
//
//   - len(Copy) <= Limits().Copy, whatever was written;
//   - StdoutBytes and StderrBytes count every byte written to each stream;
//   - Complete is true exactly when Gap is nil, and then Copy is the output
//     in arrival order, byte for byte;
//   - when the output fits the copy and no stream crossed its cap, the copy
//     is complete; when the output is longer than the copy cap, it is not;
//   - otherwise Copy is a prefix of the output, the marker line with the
//     Gap's counts, and a suffix of the output; the prefix ends and the
//     suffix starts on character boundaries; Gap.Bytes and Gap.Lines are
//     exactly the bytes and newlines between them; neither stream put more
//     than its cap into the prefix;
//   - StderrTail is a suffix of stderr alone, at most StderrTailSize bytes,
//     starting on a character boundary, and all of stderr when it fits.
func FuzzCapture(f *testing.F) {
	f.Add(uint16(0), uint16(0), uint16(0), uint16(0), uint8(1), []byte("hello\n"), []byte{20, 21})
	f.Add(uint16(600), uint16(100), uint16(0), uint16(0), uint8(40), []byte("line\nnext €\n"), []byte{255, 3, 8})
	f.Add(uint16(512), uint16(1), uint16(30), uint16(3000), uint8(64), []byte("😀é\x00\xff"), []byte{9, 200, 17})
	f.Add(uint16(1000), uint16(900), uint16(100), uint16(5), uint8(20), []byte("ab\ncd"), []byte{0, 1, 254, 255})
	f.Fuzz(func(t *testing.T, copyCap, tail, outCap, errCap uint16, repeat uint8, data, splits []byte) {
		l := Limits{
			Copy:   int64(copyCap % 3000),
			Tail:   int64(tail % 3000),
			Stdout: int64(outCap % 4000),
			Stderr: int64(errCap % 4000),
		}
		if len(splits) == 0 {
			splits = []byte{255}
		}
		text := bytes.Repeat(data, int(repeat%64)+1)
		c := New(l)
		l = c.Limits()
		var all, labels, errs []byte
		var counts [2]int64
		for i, k := 0, 0; i < len(text); k++ {
			s := splits[k%len(splits)]
			stream := int(s & 1)
			n := min(int(s>>1), len(text)-i) // 0..127 bytes, empty writes included
			p := text[i : i+n]
			w := c.Stdout()
			if stream == stderr {
				w = c.Stderr()
				errs = append(errs, p...)
			}
			if m, err := w.Write(p); m != n || err != nil {
				t.Fatalf("Write = %d, %v; want %d, nil", m, err, n)
			}
			all = append(all, p...)
			labels = append(labels, bytes.Repeat([]byte{byte(stream)}, n)...)
			counts[stream] += int64(n)
			i += n
			if n == 0 && k > 4*len(text)+len(splits) {
				break // splits of only empty writes
			}
		}
		r := c.Result()

		if int64(len(r.Copy)) > l.Copy {
			t.Fatalf("len(Copy) = %d > cap %d", len(r.Copy), l.Copy)
		}
		if r.StdoutBytes != counts[stdout] || r.StderrBytes != counts[stderr] {
			t.Fatalf("counts = %d, %d; want %d, %d", r.StdoutBytes, r.StderrBytes, counts[stdout], counts[stderr])
		}
		if r.Complete != (r.Gap == nil) {
			t.Fatalf("Complete = %v but Gap = %v", r.Complete, r.Gap)
		}
		fits := int64(len(all)) <= l.Copy && counts[stdout] <= l.Stdout && counts[stderr] <= l.Stderr
		if fits && !r.Complete {
			t.Fatalf("output of %d bytes fits %+v but the copy is not complete", len(all), l)
		}
		if int64(len(all)) > l.Copy && r.Complete {
			t.Fatalf("output of %d bytes is longer than the copy cap %d but Complete", len(all), l.Copy)
		}
		if r.Complete {
			if !bytes.Equal(r.Copy, all) {
				t.Fatalf("complete copy differs from the output:\n got %q\nwant %q", r.Copy, all)
			}
		} else {
			checkGap(t, l, all, r)
			head := labels[:r.Gap.Offset]
			if n := int64(bytes.Count(head, []byte{stdout})); n > l.Stdout {
				t.Fatalf("stdout put %d bytes into the head, cap %d", n, l.Stdout)
			}
			if n := int64(bytes.Count(head, []byte{stderr})); n > l.Stderr {
				t.Fatalf("stderr put %d bytes into the head, cap %d", n, l.Stderr)
			}
		}

		st := r.StderrTail
		if len(st) > StderrTailSize || !bytes.HasSuffix(errs, st) {
			t.Fatalf("StderrTail (%d bytes) is not a short suffix of stderr", len(st))
		}
		if len(errs) <= StderrTailSize && len(st) != len(errs) {
			t.Fatalf("StderrTail has %d bytes of a %d-byte stderr", len(st), len(errs))
		}
		if !boundary(errs, len(errs)-len(st)) {
			t.Fatalf("StderrTail starts inside a character")
		}
	})
}

// FuzzRotate checks rotate against the plain definition: b turned left by k
// is b[k:] followed by b[:k], for every k, either side the shorter.
func FuzzRotate(f *testing.F) {
	f.Add([]byte("abcdefg"), uint16(3))
	f.Add([]byte("abcdefg"), uint16(5))
	f.Add([]byte("ab"), uint16(1))
	f.Add([]byte{}, uint16(0))
	f.Fuzz(func(t *testing.T, b []byte, k16 uint16) {
		k := 0
		if len(b) > 0 {
			k = int(k16) % (len(b) + 1)
		}
		want := append(append([]byte(nil), b[k:]...), b[:k]...)
		got := append([]byte(nil), b...)
		rotate(got, k)
		if !bytes.Equal(got, want) {
			t.Fatalf("rotate(%q, %d) = %q, want %q", b, k, got, want)
		}
	})
}
