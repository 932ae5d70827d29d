// Command grepbench measures grep_tool_output against grep -c on the same
// bytes, in the same run. It saves two copies into a temporary SQLite
// database and writes the same bytes to files: 8 MiB of log-like lines
// with one marker line in the last chunk, and a 5 MiB one-line JSON
// document (greptest.OneLineJSON) with needles in its middle, across a
// chunk boundary and at its end. For each case it times (best of -n runs)
//
//   - grep_tool_output in process with count: true (what grep -c does);
//     for the first case also the plain search (max 50), the figure the
//     target answers to;
//   - with -scrollback BIN, `BIN grep --count` as a whole process, the
//     path a user of the CLI takes;
//   - grep -c (-E for the regular expressions) on the file,
//
// checks that all of them count the same lines, and prints the times and
// their ratios. It exits 1 when the target is missed: the literal over
// 8 MiB in at most 50 ms, and at most 3x grep -c.
//
//	go run ./bench/grep/cmd [-n 10] [-scrollback BIN]
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
	"strconv"
	"strings"
	"time"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/grep/greptest"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// benchCase is one search: a pattern that means the same to Go's regexp
// and to grep (-E when ere), over one of the copies.
type benchCase struct {
	name    string
	copy    string // "log" or "json"
	pattern string
	ere     bool
	ignore  bool
}

var cases = []benchCase{
	{"literal (the target)", "log", "MARKER-LAST", false, false},
	{"literal, ignore case", "log", "marker-last", false, true},
	{"regexp, rare literal in it", "log", `[0-9]+Z ERROR`, true, false},
	{"alternation of literals", "log", `MARKER-LAST|NOTHING`, true, false},
	{"regexp, literal on every line", "log", `processed request id=[0-9a-f]+ status=[45]`, true, false},
	{"long line: literal at the end", "json", "NEEDLE-777", false, false},
	{"long line: regexp from a prefix", "json", `NEEDLE-[0-9]+"`, true, false},
	{"long line: regexp over all of it", "json", `[0-9]+ é","ok":true\},\{"id":"NEEDLE-777`, true, false},
}

func main() {
	runs := flag.Int("n", 10, "runs of each; the best is reported")
	bin := flag.String("scrollback", "", "a scrollback binary: also time `scrollback grep --count` as a process")
	flag.Parse()
	log.SetFlags(0)
	ctx := context.Background()

	dir, err := os.MkdirTemp("", "grepbench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db := filepath.Join(dir, "scrollback.db")
	st, err := sqlite.Open(db, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	sess, err := scrollback.New(st, scrollback.Options{}).NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		log.Fatal(err)
	}
	ids, files := map[string]string{}, map[string]string{}
	for name, data := range map[string][]byte{"log": Copy(), "json": greptest.OneLineJSON(5 << 20)} {
		files[name] = filepath.Join(dir, name+".txt")
		if err := os.WriteFile(files[name], data, 0o600); err != nil {
			log.Fatal(err)
		}
		info, err := st.SaveCopy(ctx, sess.ID(), store.CopyMeta{Tool: "bench", Complete: true}, bytes.NewReader(data))
		if err != nil {
			log.Fatal(err)
		}
		ids[name] = info.ID
		fmt.Printf("copy %s: %d bytes\n", name, len(data))
	}

	ok := true
	fmt.Printf("%-34s %12s %12s %12s %10s %10s\n", "case", "in process", "CLI process", "grep -c", "ratio", "CLI ratio")
	for i, c := range cases {
		in := scrollback.GrepInput{ID: ids[c.copy], Pattern: c.pattern, IgnoreCase: c.ignore, Count: true}
		ours := best(*runs, func() string {
			res, err := sess.GrepToolOutput(ctx, in)
			if err != nil {
				log.Fatal(err)
			}
			return strconv.FormatInt(res.Count, 10)
		})
		args := []string{"-c"}
		if c.ere {
			args = append(args, "-E")
		}
		if c.ignore {
			args = append(args, "-i")
		}
		theirs := best(*runs, command("grep", append(args, "--", c.pattern, files[c.copy])...))
		cli := timing{}
		if *bin != "" {
			cargs := []string{"grep", "--db", db, "--session", sess.ID(), "--count"}
			if c.ignore {
				cargs = append(cargs, "-i")
			}
			cli = best(*runs, command(*bin, append(cargs, "--", ids[c.copy], c.pattern)...))
			if cli.out != theirs.out {
				log.Fatalf("%s: scrollback grep --count says %s, grep -c %s", c.name, cli.out, theirs.out)
			}
		}
		if ours.out != theirs.out {
			log.Fatalf("%s: grep_tool_output counts %s, grep -c %s", c.name, ours.out, theirs.out)
		}
		fmt.Printf("%-34s %9.2f ms %9.2f ms %9.2f ms %9.2fx %9.2fx   (%s lines)\n", c.name, ms(ours.d), ms(cli.d), ms(theirs.d),
			float64(ours.d)/float64(theirs.d), float64(cli.d)/float64(theirs.d), theirs.out)
		if i > 0 {
			continue
		}
		// The target: the plain search (max 50) of the literal.
		list := best(*runs, func() string {
			res, err := sess.GrepToolOutput(ctx, scrollback.GrepInput{ID: ids[c.copy], Pattern: c.pattern})
			if err != nil {
				log.Fatal(err)
			}
			return fmt.Sprint(len(res.Matches))
		})
		ratio := float64(list.d) / float64(theirs.d)
		fmt.Printf("%-34s %9.2f ms %12s %9.2f ms %9.2fx\n", "literal (the target), matches", ms(list.d), "", ms(theirs.d), ratio)
		ok = list.d <= 50*time.Millisecond && ratio <= 3
	}
	if !ok {
		fmt.Println("FAIL: the target is at most 50 ms and at most 3x grep -c, for the literal")
		os.Exit(1)
	}
	fmt.Println("ok: the literal in at most 50 ms and at most 3x grep -c")
}

// command returns a function that runs name with args and returns its
// standard output, trimmed; grep's status 1 (no line) is not a failure.
func command(name string, args ...string) func() string {
	return func() string {
		out, err := exec.Command(name, args...).Output()
		if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) {
			log.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
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
