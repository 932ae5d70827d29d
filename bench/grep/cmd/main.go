// Command grepbench measures grep_tool_output against grep -c on the same
// bytes: it saves an 8 MiB log-like copy, with one marker line in its last
// chunk, into a temporary SQLite database, writes the same bytes to a file,
// and times a literal search of each (best of -n runs). It prints both
// times and their ratio and exits 1 when a target is missed: at most 50 ms,
// and at most 3x grep -c.
//
//	go run ./bench/grep/cmd [-n 10] [-pattern MARKER-LAST] [-i]
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
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

func main() {
	runs := flag.Int("n", 10, "runs of each; the best is reported")
	pattern := flag.String("pattern", "MARKER-LAST", "the pattern (a literal, for the target)")
	ignoreCase := flag.Bool("i", false, "ignore case (grep -i)")
	flag.Parse()
	log.SetFlags(0)
	ctx := context.Background()

	dir, err := os.MkdirTemp("", "grepbench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	data := Copy()
	file := filepath.Join(dir, "copy.txt")
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
	info, err := st.SaveCopy(ctx, sess.ID(), store.CopyMeta{Tool: "bench", Complete: true}, bytes.NewReader(data))
	if err != nil {
		log.Fatal(err)
	}

	ours := best(*runs, func() string {
		res, err := sess.GrepToolOutput(ctx, scrollback.GrepInput{ID: info.ID, Pattern: *pattern, IgnoreCase: *ignoreCase})
		if err != nil {
			log.Fatal(err)
		}
		return fmt.Sprint(len(res.Matches))
	})
	args := []string{"-c"}
	if *ignoreCase {
		args = append(args, "-i")
	}
	args = append(args, "--", *pattern, file)
	theirs := best(*runs, func() string {
		out, err := exec.Command("grep", args...).Output()
		if err != nil {
			log.Fatalf("grep %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	})

	ratio := float64(ours.d) / float64(theirs.d)
	fmt.Printf("copy: %d bytes, pattern %q (ignore case %v)\n", len(data), *pattern, *ignoreCase)
	fmt.Printf("grep_tool_output: %8.2f ms  (%s matches)\n", ms(ours.d), ours.out)
	fmt.Printf("grep -c:          %8.2f ms  (%s matches)\n", ms(theirs.d), theirs.out)
	fmt.Printf("ratio:            %8.2fx\n", ratio)
	ok := ours.d <= 50*time.Millisecond && ratio <= 3
	if !ok {
		fmt.Println("FAIL: the target is at most 50 ms and at most 3x grep -c")
		os.Exit(1)
	}
	fmt.Println("ok: at most 50 ms and at most 3x grep -c")
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

// Copy returns 8 MiB of log-like lines with one marker line in the last
// 64 KiB chunk.
func Copy() []byte {
	var buf bytes.Buffer
	for i := 0; buf.Len() < scrollback.CopyCap-200; i++ {
		fmt.Fprintf(&buf, "2024-05-01T12:00:%02d.%06dZ INFO worker %d processed request id=%x status=200\n", i%60, i%1000000, i%17, i*7919)
	}
	buf.WriteString("2024-05-01T12:59:59Z ERROR MARKER-LAST the end\n")
	return buf.Bytes()
}
