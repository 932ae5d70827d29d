// Command mcp-bench measures scrollback's MCP server over streamable HTTP on
// loopback, as the MCP issue asks, with the server in a process of its own
// (`scrollback mcp --http 127.0.0.1:0`, built from ./cmd/scrollback) so
// that the clients' work is not billed to it:
//
//   - many concurrent clients, each in its own MCP and scrollback session
//     holding an 8 MiB retained copy, each making read_tool_output calls at
//     random offsets: throughput and p50/p99 latency, and the error count
//     (which must be zero). The clients speak JSON-RPC in plain HTTP POSTs
//     over keep-alive connections, so that they cost little CPU of the
//     machine they share with the server;
//   - a small run_command (`echo hi`) through the server against running
//     `sh -c 'echo hi'` directly: the server's overhead as a ratio.
//
// Run it from the repository root:
//
//	go run ./bench/mcp/cmd [-clients 50] [-calls 200] [-echo 200] [-gogc N]
//
// Everything it starts listens on 127.0.0.1 only and stops when it is done.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	clients := flag.Int("clients", 50, "concurrent MCP clients")
	calls := flag.Int("calls", 200, "read_tool_output calls per client")
	copyBytes := flag.Int("copy", 8<<20, "size of each client's retained copy in bytes")
	echoN := flag.Int("echo", 200, "run_command `echo hi` calls (and as many direct runs) for the overhead ratio")
	gogc := flag.String("gogc", "", "GOGC of the server process (default: the server's own setting)")
	bin := flag.String("scrollback", "", "the scrollback binary to serve with (default: build ./cmd/scrollback)")
	flag.Parse()
	log.SetFlags(0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	dir, err := os.MkdirTemp("", "scrollback-mcp-bench-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if *bin == "" {
		*bin = filepath.Join(dir, "scrollback")
		if out, err := exec.Command("go", "build", "-o", *bin, "./cmd/scrollback").CombinedOutput(); err != nil {
			log.Fatalf("building ./cmd/scrollback (run from the repository root): %v\n%s", err, out)
		}
	}
	url, pid, stop, err := startServer(ctx, *bin, dir, *gogc)
	if err != nil {
		log.Fatal(err)
	}
	defer stop()

	// The source of every copy: ASCII lines, so that any offset is valid.
	src := filepath.Join(dir, "source.txt")
	if err := writeSource(src, *copyBytes); err != nil {
		log.Fatal(err)
	}
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * *clients, DisableCompression: true}}

	fmt.Printf("scrollback MCP benchmark: streamable HTTP on %s, server in its own process (GOGC=%s), %d CPUs\n", url, orDefault(*gogc), runtime.NumCPU())
	setup := time.Now()
	sessions := make([]*session, *clients)
	ids := make([]string, *clients)
	for i := range sessions {
		s, err := connect(url, httpc)
		if err != nil {
			log.Fatal(err)
		}
		var rc struct {
			StructuredContent struct {
				OutputID string `json:"output_id"`
			} `json:"structuredContent"`
			IsError bool `json:"isError"`
		}
		if err := s.callTool("run_command", map[string]any{"command": "cat " + src}, &rc); err != nil || rc.IsError || rc.StructuredContent.OutputID == "" {
			log.Fatalf("making a copy: %v (isError %v, output_id %q)", err, rc.IsError, rc.StructuredContent.OutputID)
		}
		sessions[i], ids[i] = s, rc.StructuredContent.OutputID
	}
	fmt.Printf("setup: %d clients, each with a %d-byte copy in its own session, in %s\n", *clients, *copyBytes, time.Since(setup).Round(time.Millisecond))

	// Concurrent reads.
	lat := make([][]time.Duration, *clients)
	var errs atomic.Int64
	var firstErr sync.Once
	var wg sync.WaitGroup
	cpu0 := cpuTime(pid)
	start := time.Now()
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 1))
			lat[i] = make([]time.Duration, 0, *calls)
			for range *calls {
				off := r.Int64N(int64(*copyBytes))
				var page struct {
					StructuredContent struct {
						Text string `json:"text"`
					} `json:"structuredContent"`
					IsError bool `json:"isError"`
				}
				t0 := time.Now()
				err := sessions[i].callTool("read_tool_output", map[string]any{"id": ids[i], "offset": off}, &page)
				lat[i] = append(lat[i], time.Since(t0))
				if err != nil || page.IsError || page.StructuredContent.Text == "" {
					errs.Add(1)
					firstErr.Do(func() { log.Printf("first failure: %v (isError %v)", err, page.IsError) })
				}
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	serverCPU := cpuTime(pid) - cpu0
	all := slices.Concat(lat...)
	slices.Sort(all)
	fmt.Printf("read_tool_output: %d clients x %d calls = %d calls in %s: %.0f calls/s, p50 %s, p99 %s, max %s, errors %d\n",
		*clients, *calls, len(all), wall.Round(time.Millisecond), float64(len(all))/wall.Seconds(),
		pct(all, 50), pct(all, 99), all[len(all)-1].Round(time.Microsecond), errs.Load())
	if serverCPU > 0 {
		fmt.Printf("server CPU: %s in all, %s per call\n", serverCPU.Round(time.Millisecond), (serverCPU / time.Duration(len(all))).Round(time.Microsecond))
	}

	// run_command `echo hi` through the server against sh -c directly.
	var viaMCP, direct []time.Duration
	s := sessions[0]
	for range *echoN {
		var rc struct {
			IsError bool `json:"isError"`
		}
		t0 := time.Now()
		err := s.callTool("run_command", map[string]any{"command": "echo hi"}, &rc)
		viaMCP = append(viaMCP, time.Since(t0))
		if err != nil || rc.IsError {
			errs.Add(1)
		}
		t0 = time.Now()
		if err := exec.Command("sh", "-c", "echo hi").Run(); err != nil {
			log.Fatal(err)
		}
		direct = append(direct, time.Since(t0))
	}
	slices.Sort(viaMCP)
	slices.Sort(direct)
	fmt.Printf("echo hi: run_command over MCP p50 %s, sh -c directly p50 %s: ratio %.2fx (mean %.2fx)\n",
		pct(viaMCP, 50), pct(direct, 50), float64(pct(viaMCP, 50))/float64(pct(direct, 50)), float64(mean(viaMCP))/float64(mean(direct)))
	if errs.Load() != 0 {
		stop()
		log.Fatalf("%d calls failed", errs.Load())
	}
}

// cpuTime is the user and system CPU time process pid has used, from
// /proc (0 where there is none).
func cpuTime(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses: utime and
	// stime are the 12th and 13th, in clock ticks (100 a second on Linux).
	_, rest, ok := bytes.Cut(data, []byte(") "))
	f := strings.Fields(string(rest))
	if !ok || len(f) < 13 {
		return 0
	}
	var ut, st int64
	fmt.Sscan(f[11], &ut)
	fmt.Sscan(f[12], &st)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

var servingLine = regexp.MustCompile(`serving MCP on (http://\S+)`)

// startServer starts `scrollback mcp --http 127.0.0.1:0` on a database in
// dir and returns its endpoint, read from the line it prints when it
// listens, and a function that stops it.
func startServer(ctx context.Context, bin, dir, gogc string) (url string, pid int, stop func(), err error) {
	cmd := exec.CommandContext(ctx, bin, "mcp", "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "SCROLLBACK_DB="+filepath.Join(dir, "bench.db"), "SCROLLBACK_TOKEN=")
	if gogc != "" {
		cmd.Env = append(cmd.Env, "GOGC="+gogc)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", 0, nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", 0, nil, fmt.Errorf("starting %s: %v", bin, err)
	}
	stop = func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, stderr)
			return m[1], cmd.Process.Pid, stop, nil
		}
	}
	stop()
	return "", 0, nil, fmt.Errorf("%s mcp --http printed no address", bin)
}

// session is one MCP session spoken to with plain JSON-RPC POSTs.
type session struct {
	url, id string
	c       *http.Client
	n       int
}

func connect(url string, c *http.Client) (*session, error) {
	s := &session{url: url, c: c}
	err := s.post("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "mcp-bench", "version": "v0"},
	}, nil)
	if err == nil {
		err = s.post("notifications/initialized", map[string]any{}, nil)
	}
	return s, err
}

func (s *session) callTool(name string, args any, result any) error {
	return s.post("tools/call", map[string]any{"name": name, "arguments": args}, result)
}

// post sends one JSON-RPC message and decodes the result of a request into
// result. The response is one JSON object, or an event stream whose
// message event holds it.
func (s *session) post(method string, params, result any) error {
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	notify := strings.HasPrefix(method, "notifications/")
	if !notify {
		s.n++
		msg["id"] = s.n
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := s.c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s: %.200s", method, resp.Status, data)
	}
	if s.id == "" {
		s.id = resp.Header.Get("Mcp-Session-Id")
	}
	if notify {
		return nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		i := bytes.Index(data, []byte("data: "))
		if i < 0 {
			return fmt.Errorf("%s: an event stream without data: %.200q", method, data)
		}
		data = data[i+len("data: "):]
		if j := bytes.IndexByte(data, '\n'); j >= 0 {
			data = data[:j]
		}
	}
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("%s: %v in %.200q", method, err, data)
	}
	if r.Error != nil {
		return fmt.Errorf("%s: %s", method, r.Error.Message)
	}
	if result == nil {
		return nil
	}
	return json.Unmarshal(r.Result, result)
}

func orDefault(s string) string {
	if s == "" {
		return "default"
	}
	return s
}

func pct(sorted []time.Duration, p int) time.Duration {
	return sorted[(len(sorted)-1)*p/100].Round(time.Microsecond)
}

func mean(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

// writeSource writes n bytes of numbered ASCII lines to path.
func writeSource(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	buf := make([]byte, 0, n)
	for i := 0; len(buf) < n; i++ {
		buf = fmt.Appendf(buf, "line %08d of the benchmark's retained copy\n", i)
	}
	if _, err := f.Write(buf[:n]); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
