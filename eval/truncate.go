package eval

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/internal/utf8x"
	"github.com/scrollback-dev/scrollback/runner"
)

// The truncate baseline's numbers: what agents without scrollback show.
const (
	truncateCut    = scrollback.PreviewBudget // a command's output is cut here
	truncatePrefix = 256 << 10                // read_file sees only this prefix
	truncateMarker = "\n[output truncated]"
)

// truncateServer serves the baseline's tools: run_command cut at 24 KiB
// with no id, and read_file over a 256 KiB prefix of the file, as agents
// did before scrollback. There is no reader, grep or Code Mode.
func (w *world) truncateServer(sc *Scenario) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "truncate-baseline", Version: "v1"}, nil)
	if sc.Setup.Upstream != nil {
		w.addUpstreamTool(srv, sc.Setup.Upstream, truncateCut)
		return srv
	}
	type runIn struct {
		Command   string `json:"command" jsonschema:"the shell command, run by /bin/sh -c"`
		Cwd       string `json:"cwd,omitempty" jsonschema:"working directory"`
		TimeoutMS int64  `json:"timeout_ms,omitempty" jsonschema:"timeout in milliseconds"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "run_command",
		Description: "Run a shell command with /bin/sh -c and get its output (stdout and stderr merged). Output longer than 24 KiB is truncated."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in runIn) (*mcp.CallToolResult, any, error) {
			out := &headWriter{max: truncateCut + 4}
			r, err := runner.Run(ctx, runner.Command{Command: in.Command, Dir: in.Cwd,
				Timeout: time.Duration(in.TimeoutMS) * time.Millisecond, Stdout: out, Stderr: out})
			if err != nil {
				return nil, nil, err
			}
			text := cutText(out.buf.Bytes(), truncateCut) // buf holds more than the cut when there was more
			switch {
			case r.TimedOut:
				text += "\n[timed out]"
			case r.ExitCode == nil:
				text += "\n[killed by " + r.Signal + "]"
			case *r.ExitCode != 0:
				text += fmt.Sprintf("\n[exit status %d]", *r.ExitCode)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	type fileIn struct {
		Path  string `json:"path" jsonschema:"the file to read"`
		Line  int    `json:"line,omitempty" jsonschema:"1-based line to start at (default 1)"`
		Limit int    `json:"limit,omitempty" jsonschema:"most lines to return (default 2000)"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "read_file",
		Description: "Read lines of a text file, starting at a 1-based line, at most 2000 lines and 24 KiB."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in fileIn) (*mcp.CallToolResult, any, error) {
			text, err := readPrefix(w.abs(in.Path), in.Line, in.Limit)
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	return srv
}

func (w *world) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(w.dir, p)
}

// readPrefix is the old read_file: it reads the file's first 256 KiB, and
// only then looks for the line, so lines past the prefix are out of reach.
func readPrefix(path string, line, limit int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	prefix, err := io.ReadAll(io.LimitReader(f, truncatePrefix))
	if err != nil {
		return "", err
	}
	line, limit = max(line, 1), max(limit, 1)
	if limit > 2000 || limit <= 0 {
		limit = 2000
	}
	sc := bufio.NewScanner(bytes.NewReader(prefix))
	sc.Buffer(nil, truncatePrefix+1)
	var out bytes.Buffer
	n := 0
	for sc.Scan() {
		n++
		if n < line {
			continue
		}
		if n >= line+limit || out.Len()+len(sc.Bytes())+1 > truncateCut {
			break
		}
		out.Write(sc.Bytes())
		out.WriteByte('\n')
	}
	if n < line {
		return fmt.Sprintf("(the file has no line %d)", line), nil
	}
	return cutText(out.Bytes(), truncateCut), nil
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
