// Command querybench measures query_tool_output against the jq program on
// the same bytes, and the cost of a JSON preview's outline. In one run it:
//
//   - saves an 8 MiB JSON document ({"items": [...], "summary": {...}})
//     into a temporary SQLite database and writes the same bytes to a file,
//     then times `.items | length` through Session.QueryToolOutput (each
//     run with a filter text of its own, so the result cache never answers)
//     and `jq '.items | length' FILE` (best of -n runs each);
//   - times a select filter over a 100-line JSON Lines copy;
//   - times retaining the 8 MiB document as a tool result (save, outline
//     and preview) against retaining the same bytes made not JSON by their
//     first byte (save and preview only).
//
// It prints each figure beside its reference with the ratio, and exits 1
// when a target is missed: at most 1.5x jq, at most 5 ms for the JSON Lines
// filter, and an outline adding at most 10% to retaining the copy.
//
//	go run ./bench/query/cmd [-n 10] [-jq jq]
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/jsonq"
	"github.com/scrollback-dev/scrollback/preview"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

func main() {
	runs := flag.Int("n", 10, "runs of each; the best is reported")
	jqPath := flag.String("jq", "jq", "the jq program to compare with")
	flag.Parse()
	log.SetFlags(0)
	ctx := context.Background()

	dir, err := os.MkdirTemp("", "querybench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	data := Document(scrollback.CopyCap)
	file := filepath.Join(dir, "copy.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		log.Fatal(err)
	}
	st, err := sqlite.Open(filepath.Join(dir, "scrollback.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	sess, err := scrollback.New(st, scrollback.Options{}).NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		log.Fatal(err)
	}
	save := func(b []byte) string {
		info, err := st.SaveCopy(ctx, sess.ID(), store.CopyMeta{Tool: "bench", Complete: true}, bytes.NewReader(b))
		if err != nil {
			log.Fatal(err)
		}
		return info.ID
	}
	id := save(data)

	run := 0
	ours := best(*runs, func() string {
		run++ // a new filter text each run: the cache must not answer
		res, err := sess.QueryToolOutput(ctx, scrollback.QueryInput{ID: id, Filter: ".items | length" + strings.Repeat(" ", run)})
		if err != nil {
			log.Fatal(err)
		}
		return strings.TrimSpace(res.Text)
	})
	theirs := best(*runs, func() string {
		out, err := exec.Command(*jqPath, ".items | length", file).Output()
		if err != nil {
			log.Fatalf("%s: %v", *jqPath, err)
		}
		return strings.TrimSpace(string(out))
	})
	if ours.out != theirs.out {
		log.Fatalf("query_tool_output says %s, jq says %s", ours.out, theirs.out)
	}
	jqRatio := float64(ours.d) / float64(theirs.d)

	lines := save(Lines(100))
	small := best(*runs*10, func() string {
		run++
		res, err := sess.QueryToolOutput(ctx, scrollback.QueryInput{ID: lines, Filter: `select(.status >= 500) | {id, path}` + strings.Repeat(" ", run)})
		if err != nil {
			log.Fatal(err)
		}
		return fmt.Sprint(strings.Count(res.Text, "\n"))
	})

	// Retaining the copy as a tool result does: save, outline (for JSON, at
	// the same time as the save), preview. The reference is the same bytes
	// with their first byte made "x": not JSON, so no outline, and the same
	// save and preview work.
	notJSON := append([]byte("x"), data[1:]...)
	retain := func(b []byte) func() string {
		return func() string {
			sh := sess.Retain(ctx, scrollback.RetainInput{Tool: "bench", Data: b, Complete: true})
			if sh.Recovery != scrollback.RecoveryAvailable {
				log.Fatal(sh.RecoveryError)
			}
			return fmt.Sprint(strings.Contains(sh.Preview, "query_tool_output"))
		}
	}
	var withOutline, without timing
	for range 2 { // interleaved, so that load changes hit both alike
		w, wo := best(*runs/2, retain(data)), best(*runs/2, retain(notJSON))
		if withOutline.d == 0 || w.d < withOutline.d {
			withOutline = w
		}
		if without.d == 0 || wo.d < without.d {
			without = wo
		}
	}
	if withOutline.out != "true" || without.out != "false" {
		log.Fatalf("outline shown: %s for JSON, %s for the reference", withOutline.out, without.out)
	}
	outlineRatio := float64(withOutline.d)/float64(without.d) - 1
	saving := best(*runs, func() string { save(data); return "" })
	outline := best(*runs, func() string {
		o, ok := jsonq.OutlineOf(data)
		if !ok {
			log.Fatal("no outline")
		}
		return o.Text(preview.OutlineBytes)
	})

	fmt.Printf("copy: %d bytes of JSON (%s items)\n", len(data), ours.out)
	fmt.Printf("query_tool_output .items | length: %8.2f ms\n", ms(ours.d))
	fmt.Printf("%s .items | length FILE:          %8.2f ms\n", *jqPath, ms(theirs.d))
	fmt.Printf("ratio:                             %8.2fx (target <= 1.5x)\n", jqRatio)
	fmt.Printf("select over 100 JSON Lines:        %8.3f ms (%s results; target <= 5 ms)\n", ms(small.d), small.out)
	fmt.Printf("retain the 8 MiB JSON result:      %8.2f ms (save, outline, preview)\n", ms(withOutline.d))
	fmt.Printf("the same bytes, not JSON:          %8.2f ms (save, preview)\n", ms(without.d))
	fmt.Printf("the outline adds:                  %8.1f%% (target <= 10%%)\n", 100*outlineRatio)
	fmt.Printf("  (alone: SaveCopy %.2f ms; OutlineOf + Text %.2f ms, run beside the save)\n", ms(saving.d), ms(outline.d))
	if jqRatio > 1.5 || small.d > 5*time.Millisecond || outlineRatio > 0.10 {
		fmt.Println("FAIL: a target was missed")
		os.Exit(1)
	}
	fmt.Println("ok: every target met")
}

type timing struct {
	d   time.Duration
	out string
}

// best runs f n times and returns the shortest time.
func best(n int, f func() string) timing {
	var t timing
	for i := 0; i < max(n, 1); i++ {
		start := time.Now()
		out := f()
		if d := time.Since(start); i == 0 || d < t.d {
			t = timing{d, out}
		}
	}
	return t
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Document returns a JSON document of about size bytes shaped like an API
// export: an array of records, then a summary.
func Document(size int) []byte {
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
	buf.WriteByte('\n')
	return buf.Bytes()
}

// Lines returns n JSON Lines of access-log records.
func Lines(n int) []byte {
	var buf bytes.Buffer
	for i := range n {
		fmt.Fprintf(&buf, `{"id":%d,"path":"/api/v1/items/%d","status":%d,"ms":%d}`+"\n", i, i, 200+i%4*100, i%250)
	}
	return buf.Bytes()
}
