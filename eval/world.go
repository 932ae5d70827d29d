package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/mcpserver"
	"github.com/scrollback-dev/scrollback/proxy"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// Mode is how the tools behave in a run.
type Mode string

// The two modes of an evaluation.
const (
	// ModeScrollback offers the tools exactly as `scrollback mcp` (or, for
	// a scenario with an upstream, `scrollback proxy`) lists them.
	ModeScrollback Mode = "scrollback"
	// ModeTruncate is the baseline: a 24 KiB cut, no id, no reader.
	ModeTruncate Mode = "truncate"
)

// world is one run's surroundings: a fresh working directory holding the
// scenario's files and scripts, a fresh database and session, and an MCP
// client session on the mode's tools.
type world struct {
	dir          string // the working directory, given to the model as {{dir}}
	runs         string // where scripts log their runs
	foreignID    string
	cs           *mcp.ClientSession
	tools        []Tool
	instructions string
	closers      []func()
}

// newWorld sets up sc for one run in mode. Its errors are the harness's
// own faults (a scenario that cannot be set up), not the model's.
func newWorld(ctx context.Context, sc *Scenario, mode Mode) (w *world, err error) {
	dir, err := os.MkdirTemp("", "scrollback-eval-"+sc.Name+"-")
	if err != nil {
		return nil, err
	}
	w = &world{dir: dir, runs: filepath.Join(dir, ".runs")}
	w.closers = append(w.closers, func() { os.RemoveAll(dir) })
	defer func() {
		if err != nil {
			w.close()
			w = nil
		}
	}()
	if err := os.MkdirAll(w.runs, 0o755); err != nil {
		return nil, err
	}
	if err := writeFiles(dir, sc.Setup.Files); err != nil {
		return nil, err
	}
	if err := w.writeScripts(sc.Setup.Scripts); err != nil {
		return nil, err
	}

	st, err := sqlite.Open(filepath.Join(dir, ".scrollback.db"), nil)
	if err != nil {
		return nil, err
	}
	w.closers = append(w.closers, func() { st.Close() })
	eng := scrollback.New(st, scrollback.Options{})
	sess, err := eng.NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		return nil, err
	}
	if sc.Setup.Foreign != "" {
		other, err := eng.NewSession(ctx, scrollback.LocalOwner)
		if err != nil {
			return nil, err
		}
		res, err := other.RunCommand(ctx, scrollback.RunCommandInput{Command: sc.Setup.Foreign, Cwd: dir})
		if err != nil {
			return nil, err
		}
		if res.OutputID == "" {
			return nil, fmt.Errorf("scenario %s: the foreign command made no copy (its output fits the preview)", sc.Name)
		}
		w.foreignID = res.OutputID
	}

	var srv *mcp.Server
	switch mode {
	case ModeScrollback:
		if sc.Setup.Upstream != nil {
			p, err := proxy.New(eng, proxy.Upstream{Dial: dialServer(w.upstreamServer(sc.Setup.Upstream, 0))}, proxy.Options{})
			if err != nil {
				return nil, err
			}
			if err := p.Start(ctx); err != nil {
				return nil, err
			}
			w.closers = append(w.closers, func() { p.Close() })
			srv = p.Server(sess)
		} else {
			srv = mcpserver.NewServer(sess, mcpserver.Options{})
		}
	case ModeTruncate:
		srv = w.truncateServer(sc)
	default:
		return nil, fmt.Errorf("no mode %q: the modes are scrollback and truncate", mode)
	}

	st1, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st1, nil)
	if err != nil {
		return nil, err
	}
	w.closers = append(w.closers, func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "scrollback-eval", Version: "v1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return nil, err
	}
	w.closers = append(w.closers, func() { cs.Close() })
	w.cs = cs
	if ir := cs.InitializeResult(); ir != nil {
		w.instructions = ir.Instructions
	}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		schema, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, err
		}
		w.tools = append(w.tools, Tool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	return w, nil
}

func (w *world) close() {
	for _, c := range slices.Backward(w.closers) {
		c()
	}
}

// expand replaces {{dir}} and {{foreign_id}} in s.
func (w *world) expand(s string) string {
	return strings.NewReplacer("{{dir}}", w.dir, "{{foreign_id}}", w.foreignID).Replace(s)
}

// writeScripts makes each script an executable ./NAME that logs its
// arguments, one line a run, then runs its body in the working directory.
func (w *world) writeScripts(scripts []Script) error {
	for _, s := range scripts {
		body := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$*\" >> %s\ncd %s || exit 1\n%s\n",
			shellQuote(filepath.Join(w.runs, s.Name)), shellQuote(w.dir), s.Body)
		if err := os.WriteFile(filepath.Join(w.dir, s.Name), []byte(body), 0o755); err != nil {
			return err
		}
	}
	return nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// logRun records one run of name with args, as a script does.
func (w *world) logRun(name, args string) {
	f, err := os.OpenFile(filepath.Join(w.runs, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintln(f, strings.ReplaceAll(args, "\n", " "))
	f.Close()
}

// runsOf returns how often source ran, and how many of those runs repeated
// an earlier run's arguments.
func (w *world) runsOf(source string) (runs, reruns int) {
	data, err := os.ReadFile(filepath.Join(w.runs, source))
	if err != nil {
		return 0, 0
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		runs++
		if seen[line] {
			reruns++
		}
		seen[line] = true
	}
	return runs, reruns
}

// upstreamServer is the in-process MCP server of a scenario's upstream
// tool: it returns the file whole, as text and, for a JSON object, as
// structured content, and logs each call as a run. cut > 0 cuts the text
// at that many bytes, as the truncate baseline does.
func (w *world) upstreamServer(u *UpstreamSpec, cut int) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "eval-upstream", Version: "v1"}, nil)
	w.addUpstreamTool(srv, u, cut)
	return srv
}

func (w *world) addUpstreamTool(srv *mcp.Server, u *UpstreamSpec, cut int) {
	srv.AddTool(&mcp.Tool{Name: u.Tool, Description: u.Description, InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			w.logRun(u.Tool, string(req.Params.Arguments))
			data, err := os.ReadFile(filepath.Join(w.dir, filepath.FromSlash(u.File)))
			if err != nil {
				return nil, err
			}
			if cut > 0 {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: cutText(data, cut)}}}, nil
			}
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(data)}}}
			var obj map[string]any
			if json.Unmarshal(data, &obj) == nil {
				res.StructuredContent = obj
			}
			return res, nil
		})
}

// dialServer connects the proxy to srv over an in-process pipe.
func dialServer(srv *mcp.Server) func(context.Context) (io.ReadWriteCloser, error) {
	return func(ctx context.Context) (io.ReadWriteCloser, error) {
		a, b := net.Pipe()
		go srv.Run(context.Background(), &mcp.IOTransport{Reader: b, Writer: b})
		return a, nil
	}
}
