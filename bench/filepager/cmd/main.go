// Command filepager-bench is a stand-in for `scrollback file` used by
// bench/filepager/run.sh until the real CLI exists, plus a fast generator
// of the benchmark's input file.
//
//	filepager-bench file PATH [--line N] [--limit N] [--byte-offset N] [--json]
//	filepager-bench gen PATH LINES WIDTH
//	filepager-bench time RUNS [--clean DIR]... -- COMMAND ARGS...
//
// time runs COMMAND RUNS times straight from this process (no shell, no
// date(1) around it), removing each --clean DIR before each run untimed,
// and prints the best wall time in nanoseconds.
//
// The line index persists in $SCROLLBACK_INDEX_DIR, else in the user cache
// directory under scrollback/lines.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/scrollback-dev/scrollback/filepager"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "file":
		err = file(os.Args[2:])
	case "gen":
		err = gen(os.Args[2:])
	case "time":
		err = timeRuns(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: filepager-bench file PATH [--line N] [--limit N] [--byte-offset N] [--json]\n       filepager-bench gen PATH LINES WIDTH")
	os.Exit(2)
}

func file(args []string) error {
	fs := flag.NewFlagSet("file", flag.ExitOnError)
	line := fs.Int64("line", 1, "1-based line to start at")
	limit := fs.Int64("limit", 0, "most lines (default 2000)")
	offset := fs.Int64("byte-offset", -1, "byte offset to continue from")
	asJSON := fs.Bool("json", false, "print the page as JSON")
	// Accept the path before or after the flags.
	fs.Parse(args)
	path := fs.Arg(0)
	if fs.NArg() > 0 {
		fs.Parse(fs.Args()[1:])
	}
	if path == "" {
		usage()
	}
	dir := os.Getenv("SCROLLBACK_INDEX_DIR")
	if dir == "" {
		if c, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(c, "scrollback", "lines")
		}
	}
	req := filepager.Request{Path: path, Line: *line, Limit: *limit}
	if *offset >= 0 {
		req.ByteOffset = offset
	}
	pg, err := filepager.New(filepager.Options{IndexDir: dir}).Read(context.Background(), req)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(pg)
	}
	_, err = os.Stdout.WriteString(pg.Text)
	return err
}

// gen writes LINES lines of WIDTH bytes each (newline included), each
// starting with its line number.
func gen(args []string) error {
	if len(args) != 3 {
		usage()
	}
	lines, err1 := strconv.ParseInt(args[1], 10, 64)
	width, err2 := strconv.Atoi(args[2])
	if err1 != nil || err2 != nil || width < 10 {
		usage()
	}
	f, err := os.Create(args[0])
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	buf := make([]byte, width)
	for i := range buf {
		buf[i] = 'a' + byte(i%26)
	}
	buf[width-1] = '\n'
	for i := int64(1); i <= lines; i++ {
		b := strconv.AppendInt(buf[:0], i, 10)
		b = append(b, ' ')
		copy(buf, b)
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// timeRuns is the time subcommand.
func timeRuns(args []string) error {
	if len(args) < 3 {
		return fmt.Errorf("usage: filepager-bench time RUNS [--clean DIR]... -- COMMAND ARGS...")
	}
	runs, err := strconv.Atoi(args[0])
	if err != nil || runs < 1 {
		return fmt.Errorf("time: bad RUNS %q", args[0])
	}
	var clean []string
	rest := args[1:]
	for len(rest) > 0 && rest[0] != "--" {
		if rest[0] != "--clean" || len(rest) < 2 {
			return fmt.Errorf("time: unexpected %q", rest[0])
		}
		clean = append(clean, rest[1])
		rest = rest[2:]
	}
	if len(rest) < 2 {
		return fmt.Errorf("time: no command after --")
	}
	var best time.Duration
	for i := 0; i < runs; i++ {
		for _, d := range clean {
			os.RemoveAll(d)
		}
		cmd := exec.Command(rest[1], rest[2:]...)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("time: %v: %v\n%s", rest[1:], err, out)
		}
		if d := time.Since(start); i == 0 || d < best {
			best = d
		}
	}
	fmt.Println(best.Nanoseconds())
	return nil
}
