package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A generator writes one scenario file deterministically: the same
// arguments give the same bytes on every machine.
type generator func(w *bufio.Writer, args json.RawMessage) error

var generators = map[string]generator{
	"lines": genLines,
	"json":  genJSON,
}

func generatorNames() []string {
	var names []string
	for n := range generators {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Plant is a line placed among generated filler lines.
type Plant struct {
	// Text is the line, without its newline.
	Text string `json:"text"`
	// Line puts it at this 1-based line number.
	Line int64 `json:"line,omitempty"`
	// AtByte puts it at the first line start at or after this byte offset.
	AtByte int64 `json:"at_byte,omitempty"`
	// Across puts it so that byte offset Across falls inside it (in its
	// middle): a page boundary the text straddles.
	Across int64 `json:"across,omitempty"`
	// End puts it after the last filler line.
	End bool `json:"end,omitempty"`
}

// linesArgs are the arguments of the "lines" generator: Count filler lines
// of a style, with plants among them.
type linesArgs struct {
	Count  int64   `json:"count"`
	Style  string  `json:"style"` // log, records, seq, hex, cjk, build, events
	Seed   uint64  `json:"seed"`
	Plants []Plant `json:"plants"`
	// Every, with EveryText, adds a line EveryText (with %d the count so
	// far) after every Every-th filler line.
	Every     int64  `json:"every,omitempty"`
	EveryText string `json:"every_text,omitempty"`
}

func genLines(w *bufio.Writer, raw json.RawMessage) error {
	var a linesArgs
	if err := strictJSON(raw, &a); err != nil {
		return err
	}
	fill, ok := fillers[a.Style]
	if !ok {
		return fmt.Errorf("lines: no style %q", a.Style)
	}
	r := rand.New(rand.NewPCG(a.Seed, 0x5c0))
	placed := make([]bool, len(a.Plants))
	var off, line, everyN int64
	write := func(s string) {
		w.WriteString(s)
		w.WriteByte('\n')
		off += int64(len(s)) + 1
		line++
	}
	var buf []byte
	for i := int64(0); i < a.Count; i++ {
		buf = fill(buf[:0], r, i)
		for j, p := range a.Plants {
			if placed[j] || p.End {
				continue
			}
			switch {
			case p.Line > 0 && line+1 == p.Line,
				p.AtByte > 0 && off >= p.AtByte:
				write(p.Text)
				placed[j] = true
			case p.Across > 0 && off+int64(len(buf))+1 > p.Across-int64(len(p.Text))/2:
				// Pad so that the plant starts half its length before
				// Across.
				start := max(p.Across-int64(len(p.Text))/2, off)
				if gap := start - off; gap > 0 {
					write(strings.Repeat(".", int(gap-1)))
				}
				write(p.Text)
				placed[j] = true
			}
		}
		write(string(buf))
		if a.Every > 0 && (i+1)%a.Every == 0 {
			everyN++
			write(strings.ReplaceAll(a.EveryText, "%d", strconv.FormatInt(everyN, 10)))
		}
	}
	for j, p := range a.Plants {
		if !placed[j] && p.End {
			write(p.Text)
			placed[j] = true
		}
	}
	for j, p := range a.Plants {
		if !placed[j] {
			return fmt.Errorf("lines: plant %q was never placed: the file has %d lines and %d bytes", p.Text, line, off)
		}
	}
	return nil
}

var (
	services = []string{"api", "worker", "scheduler", "billing", "auth", "search"}
	levels   = []string{"INFO", "INFO", "INFO", "DEBUG", "WARN"}
	words    = []string{"processed", "queued", "flushed", "rotated", "synced", "retried", "cached", "validated"}
	cjk      = []string{"東京", "大阪", "注文", "出荷", "倉庫", "在庫", "顧客", "請求", "確認", "完了", "処理", "配送", "数据", "服务", "日志", "🌸", "📦", "🚚", "✅", "한국", "서울"}
	pkgs     = []string{"internal/ledger", "internal/api", "cmd/server", "pkg/money", "internal/store", "internal/auth"}
)

// fillers make one filler line each, by style, appended to b.
var fillers = map[string]func(b []byte, r *rand.Rand, i int64) []byte{
	"hex": func(b []byte, r *rand.Rand, i int64) []byte {
		return fmt.Appendf(b, "%08x %04d", r.Uint32(), r.IntN(10000))
	},
	"seq": func(b []byte, r *rand.Rand, i int64) []byte {
		b = append(b, "line "...)
		return strconv.AppendInt(b, i+1, 10)
	},
	"log": func(b []byte, r *rand.Rand, i int64) []byte {
		b = fmt.Appendf(b, "2026-11-%02d %02d:%02d:%02d.%03d %-5s %s-%d %s batch %d in %dms",
			1+i/3_000_000%28, i/100_000%24, i/1_000%60, i%60, r.IntN(1000),
			levels[r.IntN(len(levels))], services[r.IntN(len(services))], r.IntN(8),
			words[r.IntN(len(words))], r.IntN(100000), r.IntN(900)+1)
		return b
	},
	"records": func(b []byte, r *rand.Rand, i int64) []byte {
		return fmt.Appendf(b, "order=%08d customer=C%05d region=%s amount=%d.%02d status=%s",
			i+1, r.IntN(50000), []string{"eu-west", "us-east", "ap-south"}[r.IntN(3)], r.IntN(5000), r.IntN(100),
			[]string{"paid", "paid", "shipped", "refunded"}[r.IntN(4)])
	},
	"events": func(b []byte, r *rand.Rand, i int64) []byte {
		return fmt.Appendf(b, "event %d code=E-%04d source=%s", i+1, r.IntN(7000), services[r.IntN(len(services))])
	},
	"cjk": func(b []byte, r *rand.Rand, i int64) []byte {
		b = strconv.AppendInt(b, i+1, 10)
		b = append(b, ' ')
		for range 6 + r.IntN(6) {
			b = append(b, cjk[r.IntN(len(cjk))]...)
		}
		return b
	},
	"build": func(b []byte, r *rand.Rand, i int64) []byte {
		p := pkgs[r.IntN(len(pkgs))]
		switch r.IntN(4) {
		case 0:
			return fmt.Appendf(b, "compile %s/file%03d.go (%d bytes)", p, r.IntN(400), r.IntN(90000))
		case 1:
			return fmt.Appendf(b, "vet %s: ok", p)
		default:
			return fmt.Appendf(b, "link step %d: %s symbols resolved (%d)", i, p, r.IntN(10000))
		}
	},
}

// jsonArgs are the arguments of the "json" generator: an object whose
// sections are arrays of generated items, with planted members between
// them.
type jsonArgs struct {
	Sections int    `json:"sections"`
	Items    int    `json:"items"` // per section
	Seed     uint64 `json:"seed"`
	Compact  bool   `json:"compact"`
	// Fields are planted members: Key with Value, placed after section
	// After (0 = first, before any section; Sections = last).
	Fields []struct {
		Key   string          `json:"key"`
		Value json.RawMessage `json:"value"`
		After int             `json:"after"`
	} `json:"fields"`
	// Item fields may be planted into one item: Section and Index choose
	// it, Set holds the members to add or replace.
	Items2 []struct {
		Section int            `json:"section"`
		Index   int            `json:"index"`
		Set     map[string]any `json:"set"`
	} `json:"plant_items"`
}

func genJSON(w *bufio.Writer, raw json.RawMessage) error {
	var a jsonArgs
	if err := strictJSON(raw, &a); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(a.Seed, 0x150))
	nl, ind := "\n", "  "
	if a.Compact {
		nl, ind = "", ""
	}
	first := true
	member := func(key string, value []byte) {
		if !first {
			w.WriteString(",")
		}
		first = false
		k, _ := json.Marshal(key)
		fmt.Fprintf(w, "%s%s%s:%s", nl, ind, k, map[bool]string{true: "", false: " "}[a.Compact])
		w.Write(value)
	}
	fields := func(after int) {
		for _, f := range a.Fields {
			if f.After == after {
				var v bytes.Buffer
				if err := json.Compact(&v, f.Value); err != nil {
					v.Write(f.Value)
				}
				member(f.Key, v.Bytes())
			}
		}
	}
	w.WriteString("{")
	member("generated_at", []byte(`"2026-11-02T09:00:00Z"`))
	fields(0)
	for s := range a.Sections {
		var sec bytes.Buffer
		sec.WriteString("[")
		for i := range a.Items {
			item := map[string]any{
				"id":       fmt.Sprintf("INV-%05d", s*a.Items+i+1),
				"customer": fmt.Sprintf("C%05d", r.IntN(50000)),
				"total":    float64(r.IntN(2000000)) / 100,
				"currency": []string{"EUR", "USD", "GBP"}[r.IntN(3)],
				"status":   []string{"paid", "open", "void"}[r.IntN(3)],
				"lines":    r.IntN(30) + 1,
			}
			for _, p := range a.Items2 {
				if p.Section == s && p.Index == i {
					for k, v := range p.Set {
						item[k] = v
					}
				}
			}
			if i > 0 {
				sec.WriteString(",")
			}
			if !a.Compact {
				sec.WriteString("\n    ")
			}
			b, _ := json.Marshal(item)
			sec.Write(b)
		}
		if !a.Compact {
			sec.WriteString("\n  ")
		}
		sec.WriteString("]")
		member(fmt.Sprintf("batch_%03d", s+1), sec.Bytes())
		fields(s + 1)
	}
	w.WriteString(nl + "}\n")
	return nil
}

func strictJSON(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// writeFiles generates the scenario's files into dir.
func writeFiles(dir string, files []FileSpec) error {
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		out, err := os.Create(p)
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(out, 1<<20)
		err = generators[f.Gen](w, f.Args)
		if err == nil {
			err = w.Flush()
		}
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("generating %s: %w", f.Path, err)
		}
	}
	return nil
}
