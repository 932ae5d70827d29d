// Command mcp-bench measures scrollback's MCP server over streamable HTTP on
// loopback, as the MCP issue asks:
//
//   - many concurrent clients, each in its own MCP and scrollback session
//     holding an 8 MiB retained copy, each making read_tool_output calls at
//     random offsets: throughput and p50/p99 latency, and the error count
//     (which must be zero);
//   - a small run_command (`echo hi`) through the server against running
//     `sh -c 'echo hi'` directly: the server's overhead as a ratio.
//
// Run it from the repository root:
//
//	go run ./bench/mcp/cmd [-clients 50] [-calls 200] [-echo 200]
//
// Everything it starts listens on 127.0.0.1 only and stops when it is done.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/mcpserver"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

func main() {
	clients := flag.Int("clients", 50, "concurrent MCP clients")
	calls := flag.Int("calls", 200, "read_tool_output calls per client")
	copyBytes := flag.Int("copy", scrollback.CopyCap, "size of each client's retained copy in bytes")
	echoN := flag.Int("echo", 200, "run_command `echo hi` calls (and as many direct runs) for the overhead ratio")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the read phase to `FILE`")
	flag.Parse()
	log.SetFlags(0)
	ctx := context.Background()

	dir, err := os.MkdirTemp("", "scrollback-mcp-bench-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(filepath.Join(dir, "bench.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	eng := scrollback.New(st, scrollback.Options{})
	ln, err := mcpserver.Listen(ctx, "127.0.0.1:0", false)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: mcpserver.NewHTTPHandler(eng, mcpserver.HTTPOptions{})}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + mcpserver.Path

	// The source of every copy: ASCII lines, so that any offset is valid.
	src := filepath.Join(dir, "source.txt")
	if err := writeSource(src, *copyBytes); err != nil {
		log.Fatal(err)
	}
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * *clients}}

	fmt.Printf("scrollback MCP benchmark: streamable HTTP on %s, GOMAXPROCS=%d\n", ln.Addr(), runtime.GOMAXPROCS(0))
	setup := time.Now()
	sessions := make([]*mcp.ClientSession, *clients)
	ids := make([]string, *clients)
	for i := range sessions {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpc, DisableStandaloneSSE: true}, nil)
		if err != nil {
			log.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "cat " + src}})
		if err != nil || res.IsError {
			log.Fatalf("making a copy: %v %v", err, res)
		}
		id, _ := res.StructuredContent.(map[string]any)["output_id"].(string)
		if id == "" {
			log.Fatal("no copy was made")
		}
		sessions[i], ids[i] = cs, id
	}
	fmt.Printf("setup: %d clients, each with a %d-byte copy in its own session, in %s\n", *clients, *copyBytes, time.Since(setup).Round(time.Millisecond))

	// Concurrent reads.
	lat := make([][]time.Duration, *clients)
	var errs atomic.Int64
	var wg sync.WaitGroup
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
	}
	start := time.Now()
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 1))
			for range *calls {
				off := r.Int64N(int64(*copyBytes))
				t0 := time.Now()
				res, err := sessions[i].CallTool(ctx, &mcp.CallToolParams{Name: "read_tool_output",
					Arguments: map[string]any{"id": ids[i], "offset": off}})
				lat[i] = append(lat[i], time.Since(t0))
				if err != nil || res.IsError {
					errs.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	if *cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	fmt.Printf("read_tool_output: %d clients x %d calls = %d calls in %s: %.0f calls/s, p50 %s, p99 %s, max %s, errors %d\n",
		*clients, *calls, len(all), wall.Round(time.Millisecond), float64(len(all))/wall.Seconds(),
		pct(all, 50), pct(all, 99), all[len(all)-1].Round(time.Microsecond), errs.Load())

	// run_command `echo hi` through the server against sh -c directly.
	var viaMCP, direct []time.Duration
	cs := sessions[0]
	for range *echoN {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "echo hi"}})
		viaMCP = append(viaMCP, time.Since(t0))
		if err != nil || res.IsError {
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
		log.Fatalf("%d calls failed", errs.Load())
	}
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
