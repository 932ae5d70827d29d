// Command codemodemcp measures run_code through MCP, the path a model's
// call takes: `scrollback mcp --http` with scripts in worker processes
// (--code-workers 2) beside the same server running them in its own
// process (--code-workers 0), in the same run, alternating calls. For each
// script it prints the median and p90 round trip of each server and their
// ratio, with the load average:
//
//   - "return 1": a warm start (the worker's round trip, against the
//     in-process runtime start);
//   - a 2 KiB TypeScript script that returns at once: its transpile in a
//     warm worker, less "return 1";
//   - 100 awaited read_tool_output calls: per call, what the pipe adds.
//
// Between calls it pauses (-pause, default 150 ms), as a model does, so
// that the pool has its warm worker back.
//
//	go build -o /tmp/scrollback ./cmd/scrollback
//	go run ./bench/codemode/mcp -bin /tmp/scrollback [-n 60]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var servingLine = regexp.MustCompile(`serving MCP on (http://\S+)`)

func main() {
	bin := flag.String("bin", "", "the scrollback binary (go build -o PATH ./cmd/scrollback)")
	n := flag.Int("n", 60, "calls of each script on each server")
	pause := flag.Duration("pause", 150*time.Millisecond, "pause between calls")
	flag.Parse()
	if *bin == "" {
		log.Fatal("give -bin: go build -o /tmp/scrollback ./cmd/scrollback")
	}
	dir, err := os.MkdirTemp("", "codemodemcp")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	servers := map[string]*mcp.ClientSession{}
	for _, w := range []string{"2", "0"} {
		url, stop := start(*bin, filepath.Join(dir, "db"+w), w)
		defer stop()
		c := mcp.NewClient(&mcp.Implementation{Name: "codemodemcp", Version: "v0"}, nil)
		s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil)
		if err != nil {
			log.Fatal(err)
		}
		defer s.Close()
		servers[w] = s
	}
	// A copy to read, in each server's session.
	ids := map[string]string{}
	for w, s := range servers {
		ids[w] = call(ctx, s, map[string]any{"code": `return (await tools.run_command({command: "seq 1 100000"})).output_id`})
	}
	scripts := []struct{ name, code string }{
		{"return 1", "return 1"},
		{"2 KiB TypeScript", "if (Date.now() > 0) return 1;\n" + script2KiB()},
		{"100 awaited calls", "let n = 0;\nfor (let i = 0; i < 100; i++) n += (await tools.read_tool_output({id: ID, limit: 16})).text.length;\nreturn n"},
	}
	fmt.Printf("load average %s\n", loadAvg())
	fmt.Printf("%-18s %22s %22s %8s\n", "script", "workers p50 (p90)", "in process p50 (p90)", "ratio")
	med := map[string]map[string]time.Duration{}
	for _, sc := range scripts {
		times := map[string][]time.Duration{}
		for i := 0; i < *n; i++ {
			for _, w := range []string{"2", "0"} {
				code := strings.ReplaceAll(sc.code, "ID", fmt.Sprintf("%q", ids[w]))
				time.Sleep(*pause)
				t0 := time.Now()
				call(ctx, servers[w], map[string]any{"code": code})
				times[w] = append(times[w], time.Since(t0))
			}
		}
		med[sc.name] = map[string]time.Duration{}
		for _, w := range []string{"2", "0"} {
			sort.Slice(times[w], func(i, j int) bool { return times[w][i] < times[w][j] })
			med[sc.name][w] = times[w][len(times[w])/2]
		}
		p90 := func(w string) time.Duration { return times[w][len(times[w])*9/10] }
		fmt.Printf("%-18s %12s (%7s) %12s (%7s) %7.2f×\n", sc.name, ms(med[sc.name]["2"]), ms(p90("2")), ms(med[sc.name]["0"]), ms(p90("0")), float64(med[sc.name]["2"])/float64(med[sc.name]["0"]))
	}
	fmt.Printf("transpile of 2 KiB in a warm worker (2 KiB script less return 1): %s (in process: %s)\n",
		ms(med["2 KiB TypeScript"]["2"]-med["return 1"]["2"]), ms(med["2 KiB TypeScript"]["0"]-med["return 1"]["0"]))
	fmt.Printf("per awaited call, what the pipe adds: %s (workers %s, in process %s per call)\n",
		us((med["100 awaited calls"]["2"]-med["return 1"]["2"]-(med["100 awaited calls"]["0"]-med["return 1"]["0"]))/100),
		us((med["100 awaited calls"]["2"]-med["return 1"]["2"])/100), us((med["100 awaited calls"]["0"]-med["return 1"]["0"])/100))
	fmt.Printf("load average at the end %s\n", loadAvg())
}

// call calls run_code and returns its preview; a script error is fatal.
func call(ctx context.Context, s *mcp.ClientSession, args map[string]any) string {
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args})
	if err != nil {
		log.Fatal(err)
	}
	var out struct {
		Preview string          `json:"preview"`
		Error   json.RawMessage `json:"error"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	if res.IsError || len(out.Error) > 0 {
		log.Fatalf("run_code: %s", b)
	}
	return out.Preview
}

// start starts `scrollback mcp --http 127.0.0.1:0 --code-workers w` on db.
func start(bin, db, w string) (url string, stop func()) {
	cmd := exec.Command(bin, "mcp", "--http", "127.0.0.1:0", "--code-workers", w, "--log-level", "warn", "--db", db)
	cmd.Env = append(os.Environ(), "SCROLLBACK_TOKEN=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	stop = func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(os.Stderr, stderr)
			return m[1], stop
		}
	}
	stop()
	log.Fatalf("%s printed no address", bin)
	return "", nil
}

// script2KiB is a TypeScript script of about 2 KiB, as a model writes one
// (the one codemode's BenchmarkTranspile2KiB compiles).
func script2KiB() string {
	s := `interface Match { line: number; offset: number; text: string }
type Summary = { file: string; errors: number; first?: Match };
enum Severity { Info, Warn, Error }
async function scan(id: string): Promise<Match[]> {
  const out: Match[] = [];
  let offset = 0;
  for (;;) {
    const r = await tools.grep_tool_output({id, pattern: "error|panic", offset});
    out.push(...(r.matches ?? []));
    if (!r.hasMore) break;
    offset = r.nextOffset;
  }
  return out;
}
`
	for i := 0; len(s) < 2000; i++ {
		s += fmt.Sprintf("const r%d = await tools.run_command({command: `grep -c error log%d.txt`});\nconst n%d: number = Number(r%d.preview.trim()) as number;\n", i, i, i, i)
	}
	return s + "return {done: true} as Summary | {done: boolean};\n"
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
func us(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d.Nanoseconds())/1000) }

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(data))
	if err != nil || len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
