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
	"list":  genList,
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
	Style  string  `json:"style"` // log, records, seq, hex, cjk, build, events, pytest, terraform, docker, csv, ndjson
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
		buf = fill(buf[:0], r, i, a.Count)
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
var fillers = map[string]func(b []byte, r *rand.Rand, i, n int64) []byte{
	"hex": func(b []byte, r *rand.Rand, i, n int64) []byte {
		return fmt.Appendf(b, "%08x %04d", r.Uint32(), r.IntN(10000))
	},
	"seq": func(b []byte, r *rand.Rand, i, n int64) []byte {
		b = append(b, "line "...)
		return strconv.AppendInt(b, i+1, 10)
	},
	"log": func(b []byte, r *rand.Rand, i, n int64) []byte {
		b = fmt.Appendf(b, "2026-11-%02d %02d:%02d:%02d.%03d %-5s %s-%d %s batch %d in %dms",
			1+i/3_000_000%28, i/100_000%24, i/1_000%60, i%60, r.IntN(1000),
			levels[r.IntN(len(levels))], services[r.IntN(len(services))], r.IntN(8),
			words[r.IntN(len(words))], r.IntN(100000), r.IntN(900)+1)
		return b
	},
	"records": func(b []byte, r *rand.Rand, i, n int64) []byte {
		return fmt.Appendf(b, "order=%08d customer=C%05d region=%s amount=%d.%02d status=%s",
			i+1, r.IntN(50000), []string{"eu-west", "us-east", "ap-south"}[r.IntN(3)], r.IntN(5000), r.IntN(100),
			[]string{"paid", "paid", "shipped", "refunded"}[r.IntN(4)])
	},
	"events": func(b []byte, r *rand.Rand, i, n int64) []byte {
		return fmt.Appendf(b, "event %d code=E-%04d source=%s", i+1, r.IntN(7000), services[r.IntN(len(services))])
	},
	"cjk": func(b []byte, r *rand.Rand, i, n int64) []byte {
		b = strconv.AppendInt(b, i+1, 10)
		b = append(b, ' ')
		for range 6 + r.IntN(6) {
			b = append(b, cjk[r.IntN(len(cjk))]...)
		}
		return b
	},
	"pytest": func(b []byte, r *rand.Rand, i, n int64) []byte {
		mod := []string{"billing", "orders", "auth", "search", "inventory", "shipping"}[r.IntN(6)]
		return fmt.Appendf(b, "tests/%s/test_%s_%02d.py::test_%s_%s[case-%04d] PASSED%*s[%3d%%]",
			mod, mod, r.IntN(40), words[r.IntN(len(words))], mod, r.IntN(10000), 8, "", (i+1)*100/max(n, 1))
	},
	"terraform": func(b []byte, r *rand.Rand, i, n int64) []byte {
		k := i / 6
		switch i % 6 {
		case 0:
			return fmt.Appendf(b, "  # aws_route53_record.svc_%d will be updated in-place", k)
		case 1:
			return fmt.Appendf(b, "  ~ resource \"aws_route53_record\" \"svc_%d\" {", k)
		case 2:
			return fmt.Appendf(b, "        id      = \"Z%08X_svc-%d.internal_A\"", r.Uint32(), k)
		case 3:
			return fmt.Appendf(b, "      ~ ttl     = %d -> 60", []int{300, 600, 900}[r.IntN(3)])
		case 4:
			return append(b, "        # (4 unchanged attributes hidden)"...)
		}
		return append(b, "    }"...)
	},
	"docker": func(b []byte, r *rand.Rand, i, n int64) []byte {
		return fmt.Appendf(b, "2026-11-02T%02d:%02d:%02d.%09dZ INFO  %s /v1/orders/%d %d %dms req=%016x",
			i/360000%24, i/6000%60, i/100%60, r.IntN(1e9), []string{"GET", "GET", "POST", "PATCH"}[r.IntN(4)],
			r.IntN(900000)+100000, []int{200, 200, 200, 201, 204, 304}[r.IntN(6)], r.IntN(400)+1, r.Uint64())
	},
	"csv": func(b []byte, r *rand.Rand, i, n int64) []byte {
		return fmt.Appendf(b, "%d,2026-10-%02d,C%05d,%s,%d.%02d,%s", i+1, 1+r.IntN(31), r.IntN(50000),
			[]string{"eu-west", "us-east", "ap-south"}[r.IntN(3)], r.IntN(5000), r.IntN(100),
			[]string{"paid", "paid", "shipped", "refunded"}[r.IntN(4)])
	},
	"ndjson": func(b []byte, r *rand.Rand, i, n int64) []byte {
		return fmt.Appendf(b, `{"ts":"2026-11-02T%02d:%02d:%02dZ","order":"ORD-%06d","customer":"C%05d","total":%d.%02d,"status":"%s"}`,
			i/3600%24, i/60%60, i%60, i+1, r.IntN(50000), r.IntN(5000), r.IntN(100), []string{"paid", "shipped", "refunded"}[r.IntN(3)])
	},
	"build": func(b []byte, r *rand.Rand, i, n int64) []byte {
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

// listArgs are the arguments of the "list" generator: Count generated
// items of a Shape, as one JSON document: an array, or an object whose
// Items member holds them between the Head and Tail members; with an
// Indent, one item a line, else the whole document on one line. Plants set
// members of single items by dotted path ("status.containerStatuses.0.restartCount").
type listArgs struct {
	Shape   string         `json:"shape"` // pod, issue, hit, deployment, row, event
	Count   int            `json:"count"`
	Seed    uint64         `json:"seed"`
	Indent  string         `json:"indent,omitempty"` // "" = one line
	Items   string         `json:"items,omitempty"`  // "" = a bare array
	Head    map[string]any `json:"head,omitempty"`
	Tail    map[string]any `json:"tail,omitempty"`
	Start   int            `json:"start,omitempty"` // the first item's number
	Plants  []ListPlant    `json:"plants,omitempty"`
	Trailer string         `json:"trailer,omitempty"` // a line written after the document
}

// ListPlant sets members of item Index (0-based).
type ListPlant struct {
	Index int            `json:"index"`
	Set   map[string]any `json:"set"`
}

func genList(w *bufio.Writer, raw json.RawMessage) error {
	var a listArgs
	if err := strictJSON(raw, &a); err != nil {
		return err
	}
	shape, ok := shapes[a.Shape]
	if !ok {
		return fmt.Errorf("list: no shape %q", a.Shape)
	}
	r := rand.New(rand.NewPCG(a.Seed, 0x11a7))
	nl, ind := "", ""
	if a.Indent != "" {
		nl, ind = "\n", a.Indent
	}
	// Each item and member is one line of compact JSON: indented output
	// puts each on a line of its own, as the tools the shapes stand for
	// print one record a line, and searches find a record by its line.
	marshal := func(v any) []byte {
		b, _ := json.Marshal(v)
		return b
	}
	members := func(m map[string]any, first *bool) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !*first {
				w.WriteString(",")
			}
			*first = false
			kb, _ := json.Marshal(k)
			fmt.Fprintf(w, "%s%s%s:%s", nl, ind, kb, map[bool]string{true: "", false: " "}[a.Indent == ""])
			w.Write(marshal(m[k]))
		}
	}
	prefix := ind
	first := true
	if a.Items != "" {
		w.WriteString("{")
		members(a.Head, &first)
		if !first {
			w.WriteString(",")
		}
		kb, _ := json.Marshal(a.Items)
		fmt.Fprintf(w, "%s%s%s:%s[", nl, ind, kb, map[bool]string{true: "", false: " "}[a.Indent == ""])
		prefix = ind + ind
	} else {
		w.WriteString("[")
	}
	for i := range a.Count {
		item := shape(r, a.Start+i)
		for _, p := range a.Plants {
			if p.Index == i {
				for k, v := range p.Set {
					if err := setPath(item, k, v); err != nil {
						return fmt.Errorf("list: plant %d: %w", i, err)
					}
				}
			}
		}
		if i > 0 {
			w.WriteString(",")
		}
		w.WriteString(nl + prefix)
		w.Write(marshal(item))
	}
	if a.Items != "" {
		w.WriteString(nl + ind + "]")
		first = false
		members(a.Tail, &first)
		w.WriteString(nl + "}\n")
	} else {
		w.WriteString(nl + "]\n")
	}
	if a.Trailer != "" {
		w.WriteString(a.Trailer + "\n")
	}
	return nil
}

// setPath sets the member at a dotted path of maps and array indexes.
func setPath(m map[string]any, path string, v any) error {
	parts := strings.Split(path, ".")
	var cur any = m
	for i, p := range parts {
		last := i == len(parts)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[p] = v
				return nil
			}
			if c[p] == nil {
				c[p] = map[string]any{}
			}
			cur = c[p]
		case []any:
			n, err := strconv.Atoi(p)
			if err != nil || n < 0 || n >= len(c) {
				return fmt.Errorf("path %s: %q is not an index of a list of %d", path, p, len(c))
			}
			if last {
				c[n] = v
				return nil
			}
			cur = c[n]
		default:
			return fmt.Errorf("path %s: %q is inside a value that is neither an object nor a list", path, p)
		}
	}
	return nil
}

// shapes make one item of a list, by shape: plausible records of the
// tools whose output the scenarios stand for.
var shapes = map[string]func(r *rand.Rand, i int) map[string]any{
	"pod": func(r *rand.Rand, i int) map[string]any {
		app := services[r.IntN(len(services))]
		ns := []string{"shop", "payments", "search", "platform"}[r.IntN(4)]
		name := fmt.Sprintf("%s-%08x-%05x", app, r.Uint32(), r.IntN(1<<20))
		return map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": name, "namespace": ns, "uid": fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.IntN(1<<16), r.IntN(1<<16), r.IntN(1<<16), r.Uint64()&(1<<48-1)),
				"labels": map[string]any{"app": app, "pod-template-hash": fmt.Sprintf("%08x", r.Uint32())}, "creationTimestamp": fmt.Sprintf("2026-10-%02dT%02d:%02d:00Z", 1+r.IntN(30), r.IntN(24), r.IntN(60))},
			"spec": map[string]any{"nodeName": fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", r.IntN(256), r.IntN(256)),
				"containers": []any{map[string]any{"name": app, "image": fmt.Sprintf("registry.example.com/%s:v1.%d.%d", app, r.IntN(40), r.IntN(10)),
					"resources": map[string]any{"limits": map[string]any{"cpu": "500m", "memory": "512Mi"}}}}},
			"status": map[string]any{"phase": "Running", "podIP": fmt.Sprintf("10.1.%d.%d", r.IntN(256), r.IntN(256)),
				"containerStatuses": []any{map[string]any{"name": app, "ready": true, "restartCount": r.IntN(3),
					"state": map[string]any{"running": map[string]any{"startedAt": fmt.Sprintf("2026-11-01T%02d:%02d:00Z", r.IntN(24), r.IntN(60))}}}}},
		}
	},
	"issue": func(r *rand.Rand, i int) map[string]any {
		area := []string{"checkout", "search", "billing", "auth", "mobile", "api"}[r.IntN(6)]
		return map[string]any{"number": i, "title": fmt.Sprintf("%s: %s fails when %s", area, words[r.IntN(len(words))], []string{"the cart is empty", "the token expires", "retries run out", "the locale is de-DE", "two tabs are open"}[r.IntN(5)]),
			"state": []string{"open", "closed", "closed"}[r.IntN(3)], "user": map[string]any{"login": fmt.Sprintf("dev%03d", r.IntN(300))},
			"labels": []any{map[string]any{"name": area}}, "comments": r.IntN(30),
			"created_at": fmt.Sprintf("2026-%02d-%02dT%02d:00:00Z", 1+r.IntN(11), 1+r.IntN(28), r.IntN(24)),
			"html_url":   fmt.Sprintf("https://github.example.com/acme/shop/issues/%d", i)}
	},
	"hit": func(r *rand.Rand, i int) map[string]any {
		p := pkgs[r.IntN(len(pkgs))]
		return map[string]any{"path": fmt.Sprintf("%s/%s_%03d.go", p, words[r.IntN(len(words))], r.IntN(500)), "repository": "acme/" + []string{"shop", "ledger", "edge"}[r.IntN(3)],
			"score": float64(r.IntN(10000)) / 100, "line": r.IntN(2000) + 1,
			"fragment": fmt.Sprintf("if err := %s.%s(ctx, batch%d); err != nil {", strings.ReplaceAll(p[strings.LastIndex(p, "/")+1:], "-", ""), words[r.IntN(len(words))], r.IntN(100))}
	},
	"deployment": func(r *rand.Rand, i int) map[string]any {
		return map[string]any{"id": fmt.Sprintf("dep_%06d", i), "service": services[r.IntN(len(services))],
			"version": fmt.Sprintf("v2.%d.%d", r.IntN(60), r.IntN(20)), "environment": []string{"production", "staging", "staging"}[r.IntN(3)],
			"status": []string{"succeeded", "succeeded", "succeeded", "rolled_back"}[r.IntN(4)], "author": fmt.Sprintf("dev%03d", r.IntN(300)),
			"started_at": fmt.Sprintf("2026-%02d-%02dT%02d:%02d:00Z", 1+r.IntN(11), 1+r.IntN(28), r.IntN(24), r.IntN(60)), "duration_s": r.IntN(900) + 30}
	},
	"row": func(r *rand.Rand, i int) map[string]any {
		return map[string]any{"account_id": fmt.Sprintf("acct_%06d", i), "plan": []string{"free", "team", "business"}[r.IntN(3)],
			"mrr_cents": r.IntN(500000), "seats": r.IntN(400) + 1, "region": []string{"eu-west", "us-east", "ap-south"}[r.IntN(3)],
			"churn_risk": float64(r.IntN(1000)) / 1000}
	},
	"event": func(r *rand.Rand, i int) map[string]any {
		return map[string]any{"seq": i, "type": []string{"order.created", "payment.authorized", "payment.captured", "shipment.label_created", "shipment.in_transit"}[r.IntN(5)],
			"at":    fmt.Sprintf("2026-11-02T%02d:%02d:%02d.%03dZ", r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000)),
			"actor": fmt.Sprintf("svc-%s", services[r.IntN(len(services))]), "data": map[string]any{"ref": fmt.Sprintf("%016x", r.Uint64()), "amount": r.IntN(90000)}}
	},
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
