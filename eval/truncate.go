package eval

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/internal/utf8x"
	"github.com/scrollback-dev/scrollback/runner"
)

// The baselines' numbers.
const (
	// baselineBudget is the most of a result either baseline shows whole:
	// truncate cuts there, spill saves what is longer to a file.
	baselineBudget = scrollback.PreviewBudget
	truncateMarker = "\n[output truncated]"
	// spillHead is what spill shows of a saved result: its first 2 KB.
	spillHead = 2 << 10
	// readFileLines is read_file's default and largest limit, as Claude
	// Code's Read has it; readFileLineCut cuts a longer line, and
	// readFileCap bounds what one call returns (about 25,000 tokens).
	readFileLines   = 2000
	readFileLineCut = 2000
	readFileCap     = 100 << 10
)

// baselineServer serves the truncate or spill baseline's tools: for an
// agent, run_command and read_file; for every client, the upstream tools,
// each result cut at 24 KiB (truncate) or saved to a file past it (spill).
// There is no reader, grep or Code Mode. A chat client has no files, so
// spill mode shows it what truncate does: a host cannot offer a file to a
// model that has no tool to open it.
func (w *world) baselineServer(ctx context.Context) (*mcp.Server, error) {
	srv := mcp.NewServer(&mcp.Implementation{Name: string(w.mode) + "-baseline", Version: "v1"}, nil)
	if w.sc.Client == ClientAgent {
		w.addShellTools(srv)
	}
	if w.sc.Setup.Upstream == nil {
		return srv, nil
	}
	// The upstream tools, called over MCP as a host calls them, their
	// text shaped by the baseline.
	st, ct := mcp.NewInMemoryTransports()
	ss, err := w.upstreamServer().Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	w.closers = append(w.closers, func() { ss.Close() })
	up, err := mcp.NewClient(&mcp.Implementation{Name: "baseline-host", Version: "v1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return nil, err
	}
	w.closers = append(w.closers, func() { up.Close() })
	for t, err := range up.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		srv.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := up.CallTool(ctx, &mcp.CallToolParams{Name: t.Name, Arguments: req.Params.Arguments})
			if err != nil {
				return nil, err
			}
			var parts []string
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					parts = append(parts, tc.Text)
				}
			}
			text, err := w.shape(strings.Join(parts, "\n"))
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{IsError: res.IsError, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	}
	return srv, nil
}

// spills reports whether this run's results over the budget go to files.
func (w *world) spills() bool { return w.mode == ModeSpill && w.sc.Client == ClientAgent }

// shape is what the baseline shows of a whole result.
func (w *world) shape(text string) (string, error) {
	if len(text) <= baselineBudget {
		return text, nil
	}
	if !w.spills() {
		return cutText([]byte(text), baselineBudget), nil
	}
	f, path, err := w.spillFile()
	if err != nil {
		return "", err
	}
	_, err = io.WriteString(f, text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	return spillMessage(path, int64(len(text)), []byte(text[:min(len(text), spillHead+4)])), nil
}

// spillFile creates the next file a spilled result is saved to.
func (w *world) spillFile() (*os.File, string, error) {
	w.mu.Lock()
	w.nspill++
	n := w.nspill
	w.mu.Unlock()
	path := filepath.Join(w.spillDir, fmt.Sprintf("tool-result-%d.txt", n))
	f, err := os.Create(path)
	return f, path, err
}

// spillMessage is what spill mode shows for a result saved to path: its
// size, the path and the first 2 KB, as Claude Code shows a persisted
// tool result.
func spillMessage(path string, size int64, head []byte) string {
	n := utf8x.CutEnd(head, min(len(head), spillHead), false)
	return fmt.Sprintf("<persisted-output>\nOutput too large (%s). Full output saved to: %s\n\nPreview (first 2KB):\n%s\n...\n</persisted-output>",
		humanBytes(size), path, head[:n])
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1fMB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fKB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// addShellTools adds an agent's run_command and read_file.
func (w *world) addShellTools(srv *mcp.Server) {
	type runIn struct {
		Command   string `json:"command" jsonschema:"the shell command, run by /bin/sh -c"`
		Cwd       string `json:"cwd,omitempty" jsonschema:"working directory"`
		TimeoutMS int64  `json:"timeout_ms,omitempty" jsonschema:"timeout in milliseconds"`
	}
	desc := "Run a shell command with /bin/sh -c and get its output (stdout and stderr merged). Output longer than 24 KiB is truncated."
	if w.spills() {
		desc = "Run a shell command with /bin/sh -c and get its output (stdout and stderr merged). Output longer than 24 KiB is saved to a file: you get its path and its first 2 KB."
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "run_command", Description: desc},
		func(ctx context.Context, _ *mcp.CallToolRequest, in runIn) (*mcp.CallToolResult, any, error) {
			text, err := w.runShell(ctx, in.Command, in.Cwd, time.Duration(in.TimeoutMS)*time.Millisecond)
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	type fileIn struct {
		Path  string `json:"path" jsonschema:"the file to read"`
		Line  int    `json:"line,omitempty" jsonschema:"the 1-based line to start at (default 1)"`
		Limit int    `json:"limit,omitempty" jsonschema:"the most lines to return (default and most 2000)"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "read_file",
		Description: "Read a text file: up to 2000 lines from a 1-based line, each line numbered and cut at 2000 characters, at most 100 KiB in all."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in fileIn) (*mcp.CallToolResult, any, error) {
			text, err := readLines(w.abs(in.Path), in.Line, in.Limit)
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
}

// runShell runs command and returns what the baseline shows of its
// output: the first 24 KiB (truncate), or, past 24 KiB, the spill file's
// path and first 2 KB (spill). Spill writes the whole output to the file
// as it comes, so memory stays bounded.
func (w *world) runShell(ctx context.Context, command, cwd string, timeout time.Duration) (string, error) {
	if cwd == "" {
		cwd = w.dir
	}
	head := &headWriter{max: baselineBudget + 4}
	var out io.Writer = head
	var f *os.File
	var path string
	if w.spills() {
		var err error
		if f, path, err = w.spillFile(); err != nil {
			return "", err
		}
		defer f.Close()
		out = &lockedWriter{w: io.MultiWriter(head, f)}
	}
	r, err := runner.Run(ctx, runner.Command{Command: command, Dir: cwd, Timeout: timeout, Stdout: out, Stderr: out})
	if err != nil {
		return "", err
	}
	var text string
	switch {
	case f == nil:
		text = cutText(head.buf.Bytes(), baselineBudget)
	default:
		size, _ := f.Seek(0, io.SeekCurrent)
		if size <= baselineBudget {
			text = head.buf.String()
			f.Close()
			os.Remove(path)
		} else {
			b := head.buf.Bytes()
			text = spillMessage(path, size, b[:min(len(b), spillHead+4)])
		}
	}
	switch {
	case r.TimedOut:
		text += "\n[timed out]"
	case r.ExitCode == nil:
		text += "\n[killed by " + r.Signal + "]"
	case *r.ExitCode != 0:
		text += fmt.Sprintf("\n[exit status %d]", *r.ExitCode)
	}
	return text, nil
}

func (w *world) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(w.dir, p)
}

// readLines is the baselines' read_file, as an agent's file reader has
// it: from the 1-based line (default 1), at most limit lines
// (default and most 2,000), each numbered and cut at 2,000 characters,
// at most 100 KiB in all. It streams the file, so any line of any file is
// in reach.
func readLines(path string, offset, limit int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if offset <= 0 {
		offset = 1
	}
	if limit <= 0 || limit > readFileLines {
		limit = readFileLines
	}
	br := bufio.NewReaderSize(f, 64<<10)
	var out bytes.Buffer
	var line []byte
	long := false
	n := 0
	for {
		chunk, err := br.ReadSlice('\n')
		if room := readFileLineCut*utf8.UTFMax - len(line); len(chunk) > room {
			chunk, long = chunk[:room], true
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(line) > 0 || long {
			n++
		}
		if n >= offset && (len(line) > 0 || long) {
			text := bytes.TrimSuffix(line, []byte("\n"))
			if long || utf8.RuneCount(text) > readFileLineCut {
				i := 0
				for k := 0; k < readFileLineCut && i < len(text); k++ {
					_, size := utf8.DecodeRune(text[i:])
					i += size
				}
				text = append(text[:i:i], " [line cut at 2000 characters]"...)
			}
			entry := fmt.Sprintf("%6d\t%s\n", n, text)
			if out.Len()+len(entry) > readFileCap {
				fmt.Fprintf(&out, "[output truncated at 100 KiB: read on from line %d]\n", n)
				break
			}
			out.WriteString(entry)
			if n >= offset+limit-1 {
				break
			}
		}
		line, long = line[:0], false
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	if n < offset {
		return fmt.Sprintf("(the file has %d lines; there is no line %d)", n, offset), nil
	}
	return out.String(), nil
}

// cutText is b's first max bytes, cut at a character boundary, with the
// truncation marker when anything was cut.
func cutText(b []byte, max int) string {
	if len(b) <= max {
		return string(b)
	}
	n := utf8x.CutEnd(b, max, false)
	return string(b[:n]) + truncateMarker
}

// headWriter keeps the first max bytes written to it.
// stdout and stderr are written from two goroutines.
type headWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (h *headWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.max - h.buf.Len(); room > 0 {
		h.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// lockedWriter serializes the writes of stdout and stderr.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
