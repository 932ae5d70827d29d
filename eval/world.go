package eval

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/mcpserver"
	"github.com/scrollback-dev/scrollback/proxy"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// world is one run's surroundings: a fresh working directory holding the
// scenario's files and scripts; apart from it, where the model is not
// pointed, the harness's own directory with the store and the run logs;
// the sealed outputs, served once by a local HTTP server; and MCP client
// sessions on the mode's tools.
type world struct {
	sc        *Scenario
	mode      Mode
	dir       string // the working directory, given to the model as {{dir}}
	harness   string // the store and the run logs: never inside dir
	spillDir  string // spill mode's saved results
	api       string // the base URL of the sealed outputs, {{api}}
	foreignID string
	tools     []Tool
	route     map[string]*mcp.ClientSession // tool name → the session that has it
	instr     []string
	closers   []func()

	mu      sync.Mutex
	outputs map[string]*sealedOutput
	nspill  int // spill files made
}

// sealedOutput is one output the harness serves once. Its file is removed
// as soon as it is written, so that only the open descriptor reaches it:
// nothing the model can list or read holds it.
type sealedOutput struct {
	f      *os.File
	size   int64
	serves int
}

// newWorld sets up sc for one run in mode. Its errors are the harness's
// own faults (a scenario that cannot be set up), not the model's.
func newWorld(ctx context.Context, sc *Scenario, mode Mode, shown int) (w *world, err error) {
	if !slices.Contains(AllModes, mode) {
		return nil, fmt.Errorf("no mode %q: the modes are %s", mode, modeList(AllModes))
	}
	w = &world{sc: sc, mode: mode, outputs: map[string]*sealedOutput{}, route: map[string]*mcp.ClientSession{}}
	// made, not w: each "return nil, err" below sets w to nil before this
	// runs.
	made := w
	defer func() {
		if err != nil {
			made.close()
			w = nil
		}
	}()
	for _, d := range []struct {
		to      *string
		pattern string
	}{{&w.dir, "scrollback-eval-" + sc.Name + "-"}, {&w.harness, "scrollback-eval-harness-"}, {&w.spillDir, "scrollback-eval-spill-"}} {
		p, err := os.MkdirTemp("", d.pattern)
		if err != nil {
			return nil, err
		}
		w.closers = append(w.closers, func() { os.RemoveAll(p) })
		*d.to = p
	}
	if err := writeFiles(w.dir, sc.Setup.Files); err != nil {
		return nil, err
	}
	if err := w.makeOutputs(); err != nil {
		return nil, err
	}
	if err := w.writeScripts(sc.Setup.Scripts); err != nil {
		return nil, err
	}

	st, err := sqlite.Open(w.storePath(), nil)
	if err != nil {
		return nil, err
	}
	w.closers = append(w.closers, func() { st.Close() })
	eng := scrollback.New(st, scrollback.Options{ShownBytes: shown})
	sess, err := eng.NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		return nil, err
	}
	if sc.Setup.Foreign != "" {
		other, err := eng.NewSession(ctx, scrollback.LocalOwner)
		if err != nil {
			return nil, err
		}
		res, err := other.RunCommand(ctx, scrollback.RunCommandInput{Command: w.expand(sc.Setup.Foreign), Cwd: w.dir})
		if err != nil {
			return nil, err
		}
		if res.OutputID == "" {
			return nil, fmt.Errorf("scenario %s: the foreign command made no copy (its output fits the preview)", sc.Name)
		}
		w.foreignID = res.OutputID
	}

	var servers []*mcp.Server
	switch mode {
	case ModeScrollback:
		if sc.Client == ClientAgent {
			servers = append(servers, mcpserver.NewServer(sess, mcpserver.Options{}))
		}
		if sc.Setup.Upstream != nil {
			p, err := proxy.New(eng, proxy.Upstream{Dial: dialServer(w.upstreamServer())}, proxy.Options{})
			if err != nil {
				return nil, err
			}
			if err := p.Start(ctx); err != nil {
				return nil, err
			}
			w.closers = append(w.closers, func() { p.Close() })
			servers = append(servers, p.Server(sess))
		}
	default:
		srv, err := w.baselineServer(ctx)
		if err != nil {
			return nil, err
		}
		servers = append(servers, srv)
	}
	for _, srv := range servers {
		if err := w.connect(ctx, srv); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// connect opens an in-process MCP client session on srv and adds its
// tools; a tool another server already offers keeps the first (both read
// the same session).
func (w *world) connect(ctx context.Context, srv *mcp.Server) error {
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		return err
	}
	w.closers = append(w.closers, func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "scrollback-eval", Version: "v1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return err
	}
	w.closers = append(w.closers, func() { cs.Close() })
	if ir := cs.InitializeResult(); ir != nil && ir.Instructions != "" && !slices.Contains(w.instr, ir.Instructions) {
		w.instr = append(w.instr, ir.Instructions)
	}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		if w.route[t.Name] != nil {
			continue
		}
		schema, err := json.Marshal(t.InputSchema)
		if err != nil {
			return err
		}
		w.route[t.Name] = cs
		w.tools = append(w.tools, Tool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	return nil
}

// instructions are the servers' instructions, each once.
func (w *world) instructions() string { return strings.Join(w.instr, "\n\n") }

// storePath is where the run's store lives: in the harness's directory,
// never in the model's working directory.
func (w *world) storePath() string { return filepath.Join(w.harness, "scrollback.db") }

func (w *world) close() {
	for _, c := range slices.Backward(w.closers) {
		c()
	}
}

// expand replaces {{dir}}, {{api}} and {{foreign_id}} in s.
func (w *world) expand(s string) string {
	return strings.NewReplacer("{{dir}}", w.dir, "{{api}}", w.api, "{{foreign_id}}", w.foreignID).Replace(s)
}

// makeOutputs generates the sealed outputs and starts the HTTP server that
// serves each once.
func (w *world) makeOutputs() error {
	if len(w.sc.Setup.Outputs) == 0 {
		return nil
	}
	for _, o := range w.sc.Setup.Outputs {
		p := filepath.Join(w.harness, "output-"+o.Name)
		if err := writeFiles(w.harness, []FileSpec{{Path: filepath.Base(p), Gen: o.Gen, Args: o.Args}}); err != nil {
			return fmt.Errorf("output %s: %w", o.Name, err)
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		w.closers = append(w.closers, func() { f.Close() })
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		if err := os.Remove(p); err != nil {
			return err
		}
		w.outputs[o.Name] = &sealedOutput{f: f, size: fi.Size()}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	token := make([]byte, 8)
	rand.Read(token)
	prefix := "/" + hex.EncodeToString(token) + "/"
	w.api = "http://" + ln.Addr().String() + strings.TrimSuffix(prefix, "/")
	hs := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok {
			http.NotFound(rw, r)
			return
		}
		rd, err := w.serve(name)
		switch {
		case errors.Is(err, errGone):
			http.Error(rw, "410 Gone: "+name+" was served once already; fetching it again runs it again", http.StatusGone)
		case err != nil:
			http.Error(rw, err.Error(), http.StatusNotFound)
		default:
			rw.Header().Set("Content-Type", contentType(name))
			io.Copy(rw, rd)
		}
	})}
	go hs.Serve(ln)
	w.closers = append(w.closers, func() { hs.Close() })
	return nil
}

var errGone = errors.New("served once already")

// serve returns output name's reader and counts the serve; a second serve
// is a re-run, and returns errGone with the count made.
func (w *world) serve(name string) (io.Reader, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	o := w.outputs[name]
	if o == nil {
		var have []string
		for n := range w.outputs {
			have = append(have, n)
		}
		slices.Sort(have)
		return nil, fmt.Errorf("no output %q here; there are %s", name, strings.Join(have, ", "))
	}
	o.serves++
	if o.serves > 1 {
		return nil, errGone
	}
	return io.NewSectionReader(o.f, 0, o.size), nil
}

// readOutput returns output name whole, counting the serve as serve does,
// but serving it again (an MCP tool answers again; the re-run is counted).
func (w *world) readOutput(name string) (string, error) {
	_, err := w.serve(name)
	if err != nil && !errors.Is(err, errGone) {
		return "", err
	}
	w.mu.Lock()
	o := w.outputs[name]
	w.mu.Unlock()
	b := make([]byte, o.size)
	if _, err := o.f.ReadAt(b, 0); err != nil && err != io.EOF {
		return "", err
	}
	return string(b), nil
}

func contentType(name string) string {
	switch {
	case strings.HasSuffix(name, "json"):
		return "application/json"
	case strings.HasSuffix(name, "csv"):
		return "text/csv"
	}
	return "text/plain; charset=utf-8"
}

// writeScripts makes each script an executable ./NAME that logs its
// arguments, one line a run, then runs its body in the working directory.
// {{fetch NAME}} in a body fetches sealed output NAME with curl; such a
// script's runs are counted by the server instead.
func (w *world) writeScripts(scripts []Script) error {
	for _, s := range scripts {
		body := fetchRE.ReplaceAllStringFunc(s.Body, func(m string) string {
			name := fetchRE.FindStringSubmatch(m)[1]
			return "curl -sS -N --fail-with-body " + shellQuote(w.api+"/"+name)
		})
		if s.sealed() {
			if _, err := exec.LookPath("curl"); err != nil {
				return fmt.Errorf("scenario %s: its script %s fetches a sealed output with curl, and there is no curl on PATH", w.sc.Name, s.Name)
			}
		}
		log := ""
		if !s.sealed() {
			log = fmt.Sprintf("printf '%%s\\n' \"$*\" >> %s\n", shellQuote(filepath.Join(w.harness, "runs-"+s.Name)))
		}
		text := fmt.Sprintf("#!/bin/sh\n%scd %s || exit 1\n%s\n", log, shellQuote(w.dir), w.expand(body))
		if err := writeExecutable(filepath.Join(w.dir, s.Name), []byte(text)); err != nil {
			return err
		}
	}
	return nil
}

// writeExecutable writes an executable file that may be run at once. It
// holds syscall.ForkLock while the file is open for writing, so that no
// process started meanwhile (runs go in parallel) inherits the open
// descriptor up to its exec, which makes running the file fail with "text
// file busy".
func writeExecutable(path string, data []byte) error {
	syscall.ForkLock.Lock()
	defer syscall.ForkLock.Unlock()
	return os.WriteFile(path, data, 0o755)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// runs returns how often the sources ran, and how many of those runs were
// re-runs: a script that prints files run again with the same arguments,
// or a sealed output served again.
func (w *world) runs() (runs, reruns int) {
	for _, s := range w.sc.Setup.Scripts {
		if s.sealed() || !slices.Contains(w.sc.Source, s.Name) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(w.harness, "runs-"+s.Name))
		if err != nil {
			continue
		}
		seen := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			runs++
			if seen[line] {
				reruns++
			}
			seen[line] = true
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, o := range w.outputs {
		runs += o.serves
		reruns += max(o.serves-1, 0)
	}
	return runs, reruns
}

// upstreamServer is the in-process MCP server of the scenario's upstream
// tools: each call answers with the sealed output its key argument
// selects, as text and, for a JSON object, as structured content.
func (w *world) upstreamServer() *mcp.Server {
	up := w.sc.Setup.Upstream
	name := up.Name
	if name == "" {
		name = "eval-upstream"
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "v1"}, nil)
	for _, t := range up.Tools {
		srv.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.schema()},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				text, err := w.callUpstream(ctx, t, req.Params.Arguments)
				if err != nil {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
				}
				res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
				var obj map[string]any
				if strings.HasPrefix(text, "{") && json.Unmarshal([]byte(text), &obj) == nil {
					res.StructuredContent = obj
				}
				return res, nil
			})
	}
	return srv
}

func (t UpstreamTool) schema() json.RawMessage {
	props := map[string]any{}
	for name, d := range t.Params {
		typ, desc, _ := strings.Cut(d, ":")
		props[name] = map[string]any{"type": typ, "description": strings.TrimSpace(desc)}
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
	return b
}

// callUpstream answers one call of an upstream tool.
func (w *world) callUpstream(ctx context.Context, t UpstreamTool, raw json.RawMessage) (string, error) {
	var args map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			return "", fmt.Errorf("the arguments are not a JSON object: %v", err)
		}
	}
	if t.Fetch {
		u, _ := args["url"].(string)
		return w.fetch(ctx, u)
	}
	val := ""
	if t.Key != "" {
		if v, ok := args[t.Key]; ok && v != nil {
			val = strings.TrimSpace(fmt.Sprint(v))
			if f, ok := v.(float64); ok {
				val = fmt.Sprint(int64(f))
			}
		}
	}
	out, ok := t.Outputs[val]
	if !ok && val != "" {
		out, ok = t.Outputs["*"]
	}
	if !ok {
		var have []string
		for k := range t.Outputs {
			if k != "*" {
				have = append(have, fmt.Sprintf("%q", k))
			}
		}
		slices.Sort(have)
		return "", fmt.Errorf("%s: no result for %s=%q (known: %s)", t.Name, t.Key, val, strings.Join(have, ", "))
	}
	return w.readOutput(out)
}

// fetch is an MCP fetch tool's GET: the body as text, an HTTP error as a
// tool error with its body.
func (w *world) fetch(ctx context.Context, url string) (string, error) {
	if url == "" {
		return "", errors.New("give the url to fetch")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return string(body), nil
}

// dialServer connects the proxy to srv over an in-process pipe.
func dialServer(srv *mcp.Server) func(context.Context) (io.ReadWriteCloser, error) {
	return func(ctx context.Context) (io.ReadWriteCloser, error) {
		a, b := net.Pipe()
		go srv.Run(context.Background(), &mcp.IOTransport{Reader: b, Writer: b})
		return a, nil
	}
}
