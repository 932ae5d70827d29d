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
//	go run ./bench/mcp/cmd [-clients 50] [-calls 200] [-echo 200] [-gogc N] [-ref BIN] [-floor] [-oauth] [-stateless] [-rounds 3] [-profile DIR]
//
// It prints the machine's load average beside its figures: on a shared
// machine they are comparable only within one run. To compare two builds,
// give the other one (main's, say) with -ref BIN: the reads then run against
// each in turn, -rounds times (3), on fresh servers, and the medians are
// compared as ratios. With -floor, the rounds also run against two floor
// servers, this program run again with -serve-floor: the official SDK's
// streamable HTTP handler (JSON answers, as scrollback's) with a
// read_tool_output that does nothing and returns a result shaped like a
// page (floor-page: the same 4 KiB of text in a text block and in
// structuredContent) or two bytes (floor-tiny), so that the server CPU per
// call scrollback adds to what the SDK costs reads as a ratio; a third,
// floor-store, reads the page from scrollback's store with the engine's
// own call and answers it as scrollback shapes it, nothing else around it:
// what the SDK and the store cost together. Two more
// ways of calling the same server can join the rounds: -oauth (the server
// with --oauth-issuer, each client a user of its own sending an RS256 JWT
// access token signed by an issuer this program serves) and -stateless
// (protocol 2026-07-28: no initialize and no MCP session, each request
// carrying its version in MCP-Protocol-Version and _meta, acting on the
// principal's default scrollback session). With -profile DIR, every server
// serves Go's profiles ($SCROLLBACK_PPROF) and the CPU and allocation
// profiles of each round's reads are written to DIR, for `go tool pprof`.
//
// Everything it starts listens on 127.0.0.1 only and stops when it is done.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	ref := flag.String("ref", "", "a reference scrollback `binary` (main's, say): the reads run against it and the measured one in turn, -rounds times, and the medians are compared")
	rounds := flag.Int("rounds", 3, "with -ref or -floor, rounds of reads against each server")
	floor := flag.Bool("floor", false, "also measure the SDK's floor: the official SDK's streamable HTTP handler, in a process of its own, with a read_tool_output that does nothing and returns a result shaped like a page (floor-page) or two bytes (floor-tiny), or that reads the page from scrollback's store and nothing else (floor-store); rounds alternate as with -ref")
	serve := flag.String("serve-floor", "", "serve a floor server (`page` or `tiny`) and print its address, as -floor runs it; nothing else")
	oauth := flag.Bool("oauth", false, "also measure the server with --oauth-issuer (an issuer served by this program), each client a user sending its JWT access token; rounds alternate as with -ref")
	stateless := flag.Bool("stateless", false, "also measure requests of protocol 2026-07-28 (no MCP session, each request on its own, on the default scrollback session); rounds alternate as with -ref")
	profile := flag.String("profile", "", "write the CPU and allocation profiles of each server's reads to `DIR` (the servers serve them with $SCROLLBACK_PPROF)")
	profileSecs := flag.Int("profile-seconds", 4, "with -profile, the `seconds` each profile covers from the start of the reads (give enough -calls to last that long)")
	flag.Parse()
	log.SetFlags(0)
	if *serve != "" {
		serveFloor(*serve)
		return
	}
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
	// The source of every copy: ASCII lines, so that any offset is valid.
	src := filepath.Join(dir, "source.txt")
	if err := writeSource(src, *copyBytes); err != nil {
		log.Fatal(err)
	}
	b := &bench{dir: dir, src: src, gogc: *gogc, clients: *clients, calls: *calls, copyBytes: *copyBytes, profile: *profile, profileSecs: *profileSecs}
	if *profile != "" {
		if err := os.MkdirAll(*profile, 0o755); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("scrollback MCP benchmark: streamable HTTP on loopback, server in its own process (GOGC=%s), %d CPUs, load average %s\n", orDefault(*gogc), runtime.NumCPU(), loadAvg())

	if *ref != "" || *floor || *oauth || *stateless {
		self, err := os.Executable()
		if err != nil {
			log.Fatal(err)
		}
		var targets []target
		if *ref != "" {
			targets = append(targets, target{name: "reference", argv: scrollbackArgs(*ref)})
		}
		targets = append(targets, target{name: "measured", argv: scrollbackArgs(*bin)})
		if *oauth {
			iss, err := startIssuer()
			if err != nil {
				log.Fatal(err)
			}
			targets = append(targets, target{name: "oauth", argv: append(scrollbackArgs(*bin), "--oauth-issuer", iss.url), issuer: iss})
		}
		if *stateless {
			targets = append(targets, target{name: "stateless", argv: scrollbackArgs(*bin), stateless: true})
		}
		if *floor {
			targets = append(targets, target{name: "floor-page", argv: []string{self, "-serve-floor", floorPage}},
				target{name: "floor-store", argv: []string{self, "-serve-floor", floorStore}},
				target{name: "floor-tiny", argv: []string{self, "-serve-floor", floorTiny}})
		}
		results := make(map[string][]readResult)
		for i := range max(*rounds, 1) {
			for _, t := range targets {
				r, err := b.reads(ctx, t, fmt.Sprintf("%s-round%d", t.name, i+1))
				if err != nil {
					log.Fatal(err)
				}
				fmt.Printf("round %d, %s: %s (load average %s)\n", i+1, t.name, r, loadAvg())
				results[t.name] = append(results[t.name], r)
			}
		}
		failed := false
		for _, t := range targets {
			m := median(results[t.name])
			fmt.Printf("median of %d rounds, %s: server CPU per call %s, %.0f calls/s, p50 %s, p99 %s, errors %d\n",
				len(results[t.name]), t.name, m.cpu, m.rate, m.p50, m.p99, m.errs)
			failed = failed || m.errs != 0
		}
		// Each way of calling scrollback beside each reference, and the
		// other ways beside the plain one.
		for _, a := range targets {
			if a.name != "measured" && a.name != "oauth" && a.name != "stateless" {
				continue
			}
			m := median(results[a.name])
			for _, t := range targets {
				if t.name == a.name || t.name == "oauth" || t.name == "stateless" || a.name != "measured" && t.name == "reference" {
					continue
				}
				r := median(results[t.name])
				fmt.Printf("%s / %s: server CPU per call %s / %s = %.2fx; calls/s %.0f / %.0f = %.2fx; p50 %s / %s = %.2fx; p99 %s / %s = %.2fx\n",
					a.name, t.name, m.cpu, r.cpu, ratio(m.cpu, r.cpu), m.rate, r.rate, m.rate/r.rate,
					m.p50, r.p50, ratio(m.p50, r.p50), m.p99, r.p99, ratio(m.p99, r.p99))
				cpu, p99 := roundRatios(results[a.name], results[t.name])
				fmt.Printf("%s / %s, round by round: server CPU per call %s; p99 %s\n", a.name, t.name, cpu, p99)
			}
		}
		fmt.Printf("load average at the end: %s\n", loadAvg())
		if failed {
			log.Fatalf("calls failed")
		}
		return
	}

	s, r, err := b.start(ctx, target{name: "measured", argv: scrollbackArgs(*bin)}, "measured")
	if err != nil {
		log.Fatal(err)
	}
	defer s.stop()
	fmt.Printf("read_tool_output: %s\n", r)
	if r.errs != 0 {
		s.stop()
		log.Fatalf("%d calls failed", r.errs)
	}

	// run_command `echo hi` through the server against sh -c directly.
	var viaMCP, direct []time.Duration
	errs := 0
	for range *echoN {
		var rc struct {
			IsError bool `json:"isError"`
		}
		t0 := time.Now()
		err := s.sessions[0].callTool("run_command", map[string]any{"command": "echo hi"}, &rc)
		viaMCP = append(viaMCP, time.Since(t0))
		if err != nil || rc.IsError {
			errs++
		}
		t0 = time.Now()
		if err := exec.Command("sh", "-c", "echo hi").Run(); err != nil {
			log.Fatal(err)
		}
		direct = append(direct, time.Since(t0))
	}
	if len(viaMCP) > 0 {
		slices.Sort(viaMCP)
		slices.Sort(direct)
		fmt.Printf("echo hi: run_command over MCP p50 %s, sh -c directly p50 %s: ratio %.2fx (mean %.2fx)\n",
			pct(viaMCP, 50), pct(direct, 50), float64(pct(viaMCP, 50))/float64(pct(direct, 50)), float64(mean(viaMCP))/float64(mean(direct)))
	}
	fmt.Printf("load average at the end: %s\n", loadAvg())
	if errs != 0 {
		s.stop()
		log.Fatalf("%d calls failed", errs)
	}
}

// bench is one configuration of the reads.
type bench struct {
	dir, src, gogc            string
	clients, calls, copyBytes int
	profile                   string // where profiles go; "" for none
	profileSecs               int
	n                         int // servers started, for their databases
}

// readResult is what one run of the concurrent reads measured.
type readResult struct {
	calls          int
	wall           time.Duration
	rate           float64 // calls a second
	p50, p99, max  time.Duration
	errs           int64
	cpu            time.Duration // the server's CPU time per call
	sys            float64       // the share of it in the kernel
	faults         float64       // the server's minor page faults per call
	peakRSS        int64         // the server's peak resident set, in bytes
	clients, perCl int
}

func (r readResult) String() string {
	return fmt.Sprintf("%d clients x %d calls = %d calls in %s: %.0f calls/s, p50 %s, p99 %s, max %s, errors %d; server CPU %s per call (%.0f%% in the kernel, %.2f minor faults), peak RSS %d MiB",
		r.clients, r.perCl, r.calls, r.wall.Round(time.Millisecond), r.rate, r.p50, r.p99, r.max, r.errs, r.cpu, 100*r.sys, r.faults, r.peakRSS>>20)
}

// median is the median of each figure of rs, taken separately.
func median(rs []readResult) readResult {
	pick := func(f func(readResult) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	var m readResult
	m.rate = pick(func(r readResult) float64 { return r.rate })
	m.p50 = time.Duration(pick(func(r readResult) float64 { return float64(r.p50) }))
	m.p99 = time.Duration(pick(func(r readResult) float64 { return float64(r.p99) }))
	m.cpu = time.Duration(pick(func(r readResult) float64 { return float64(r.cpu) }))
	m.sys = pick(func(r readResult) float64 { return r.sys })
	m.faults = pick(func(r readResult) float64 { return r.faults })
	for _, r := range rs {
		m.errs += r.errs
	}
	return m
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

// roundRatios says, for the CPU per call and the p99, the ratio of a's
// figure to b's in each round and the median of those ratios: the rounds
// alternate the servers, so each ratio compares runs a few seconds
// apart, under much the same load from the machine's other users.
func roundRatios(a, b []readResult) (cpu, p99 string) {
	say := func(f func(readResult) time.Duration) string {
		var rs []float64
		var out strings.Builder
		for i := range min(len(a), len(b)) {
			r := ratio(f(a[i]), f(b[i]))
			rs = append(rs, r)
			fmt.Fprintf(&out, "%.2fx ", r)
		}
		if len(rs) == 0 {
			return "none"
		}
		slices.Sort(rs)
		fmt.Fprintf(&out, "(median %.2fx)", rs[len(rs)/2])
		return out.String()
	}
	return say(func(r readResult) time.Duration { return r.cpu }), say(func(r readResult) time.Duration { return r.p99 })
}

// target is a server to measure and how its clients call it.
type target struct {
	name string
	argv []string // the command line that starts the server
	// issuer, when set, signs each client an access token of a user of
	// its own (the server runs with --oauth-issuer).
	issuer *issuer
	// stateless clients speak protocol 2026-07-28: no MCP session.
	stateless bool
}

// scrollbackArgs is the command line of `scrollback mcp --http` of bin.
func scrollbackArgs(bin string) []string {
	return []string{bin, "mcp", "--http", "127.0.0.1:0"}
}

// reads starts t's server, measures the concurrent reads, stops it and
// removes its database; its profiles, with -profile, are named after run.
func (b *bench) reads(ctx context.Context, t target, run string) (readResult, error) {
	s, r, err := b.start(ctx, t, run)
	if err == nil {
		s.stop()
	}
	files, _ := filepath.Glob(filepath.Join(b.dir, fmt.Sprintf("bench%d.db*", b.n)))
	for _, f := range files {
		os.Remove(f)
	}
	return r, err
}

// served is a running server with its clients' sessions.
type served struct {
	stop     func()
	sessions []*session
}

// start starts t's server on a database of its own, gives each client a
// session holding a copy, and measures the concurrent reads: each client
// makes its calls at random offsets of its copy.
func (b *bench) start(ctx context.Context, t target, run string) (*served, readResult, error) {
	b.n++
	url, pid, profiles, stop, err := startServer(ctx, t.argv, b.dir, fmt.Sprintf("bench%d.db", b.n), b.gogc, b.profile != "")
	if err != nil {
		return nil, readResult{}, err
	}
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * b.clients, DisableCompression: true}}
	s := &served{stop: func() { httpc.CloseIdleConnections(); stop() }, sessions: make([]*session, b.clients)}
	ids := make([]string, b.clients)
	for i := range s.sessions {
		c := &session{url: url, c: httpc, stateless: t.stateless}
		if t.issuer != nil {
			if c.token, err = t.issuer.token(fmt.Sprintf("user%02d", i), url); err != nil {
				s.stop()
				return nil, readResult{}, err
			}
		}
		if !t.stateless {
			if err := c.connect(); err != nil {
				s.stop()
				return nil, readResult{}, err
			}
		}
		var rc struct {
			StructuredContent struct {
				OutputID string `json:"output_id"`
			} `json:"structuredContent"`
			IsError bool `json:"isError"`
		}
		if err := c.callTool("run_command", map[string]any{"command": "cat " + b.src}, &rc); err != nil || rc.IsError || rc.StructuredContent.OutputID == "" {
			s.stop()
			return nil, readResult{}, fmt.Errorf("making a copy: %v (isError %v, output_id %q)", err, rc.IsError, rc.StructuredContent.OutputID)
		}
		s.sessions[i], ids[i] = c, rc.StructuredContent.OutputID
	}

	lat := make([][]time.Duration, b.clients)
	var errs atomic.Int64
	var firstErr sync.Once
	var wg sync.WaitGroup
	profiled := make(chan error, 1)
	if profiles != "" {
		go func() { profiled <- b.takeProfiles(profiles, run) }()
	} else {
		profiled <- nil
	}
	st0 := procStat(pid)
	start := time.Now()
	for i := range s.sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 1))
			lat[i] = make([]time.Duration, 0, b.calls)
			for range b.calls {
				off := r.Int64N(int64(b.copyBytes))
				var page struct {
					StructuredContent struct {
						Text string `json:"text"`
					} `json:"structuredContent"`
					IsError bool `json:"isError"`
				}
				t0 := time.Now()
				err := s.sessions[i].callTool("read_tool_output", map[string]any{"id": ids[i], "offset": off}, &page)
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
	st := procStat(pid).minus(st0)
	if err := <-profiled; err != nil {
		s.stop()
		return nil, readResult{}, err
	}
	if profiles != "" && wall < time.Duration(b.profileSecs)*time.Second {
		log.Printf("%s: the reads took %s, less than the %d s profiled: give more -calls", run, wall.Round(time.Millisecond), b.profileSecs)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	r := readResult{calls: len(all), wall: wall, rate: float64(len(all)) / wall.Seconds(),
		p50: pct(all, 50), p99: pct(all, 99), max: all[len(all)-1].Round(time.Microsecond), errs: errs.Load(),
		cpu: (st.cpu() / time.Duration(len(all))).Round(time.Microsecond), sys: float64(st.sys) / float64(max(st.cpu(), 1)),
		faults: float64(st.minflt) / float64(len(all)), peakRSS: peakRSS(pid),
		clients: b.clients, perCl: b.calls}
	return s, r, nil
}

// loadAvg is the machine's load averages over 1, 5 and 15 minutes, from
// /proc ("?" where there is none).
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(data))
	if err != nil || len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// peakRSS is process pid's peak resident set in bytes, from /proc (0
// where there is none).
func peakRSS(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscan(rest, &kb)
			return kb << 10
		}
	}
	return 0
}

// stat is what /proc/PID/stat says of a process's CPU time and page
// faults.
type stat struct {
	user, sys time.Duration
	minflt    int64 // minor page faults
}

func (s stat) cpu() time.Duration { return s.user + s.sys }

func (s stat) minus(t stat) stat {
	return stat{s.user - t.user, s.sys - t.sys, s.minflt - t.minflt}
}

// procStat reads process pid's CPU time and page faults from /proc (the
// zero stat where there is none).
func procStat(pid int) stat {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return stat{}
	}
	// Fields after the command name, which is in parentheses: minflt is
	// the 10th, utime and stime the 14th and 15th, in clock ticks (100 a
	// second on Linux); the first after the name is the 3rd.
	_, rest, ok := bytes.Cut(data, []byte(") "))
	f := strings.Fields(string(rest))
	if !ok || len(f) < 13 {
		return stat{}
	}
	var ut, st, minflt int64
	fmt.Sscan(f[7], &minflt)
	fmt.Sscan(f[11], &ut)
	fmt.Sscan(f[12], &st)
	return stat{user: time.Duration(ut) * 10 * time.Millisecond, sys: time.Duration(st) * 10 * time.Millisecond, minflt: minflt}
}

var (
	servingLine  = regexp.MustCompile(`serving MCP on (http://\S+)`)
	profilesLine = regexp.MustCompile(`(http://\S+/debug/pprof/)`)
)

// startServer starts argv (`scrollback mcp --http 127.0.0.1:0`, or a floor
// server) on database db in dir and returns its endpoint, read from the line it prints when it
// listens, and a function that stops it. With profile, the server serves
// Go's profiles on a port of its own, whose URL it returns too.
func startServer(ctx context.Context, argv []string, dir, db, gogc string, profile bool) (url string, pid int, profiles string, stop func(), err error) {
	bin := argv[0]
	cmd := exec.CommandContext(ctx, bin, argv[1:]...)
	cmd.Env = append(os.Environ(), "SCROLLBACK_DB="+filepath.Join(dir, db), "SCROLLBACK_TOKEN=", "SCROLLBACK_PPROF=")
	if gogc != "" {
		cmd.Env = append(cmd.Env, "GOGC="+gogc)
	}
	if profile {
		cmd.Env = append(cmd.Env, "SCROLLBACK_PPROF=127.0.0.1:0")
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", 0, "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", 0, "", nil, fmt.Errorf("starting %s: %v", bin, err)
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
		if m := profilesLine.FindStringSubmatch(sc.Text()); m != nil {
			profiles = m[1]
			continue
		}
		if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, stderr)
			if profile && profiles == "" {
				stop()
				return "", 0, "", nil, fmt.Errorf("%s serves no profiles: build it with $SCROLLBACK_PPROF", strings.Join(argv, " "))
			}
			return m[1], cmd.Process.Pid, profiles, stop, nil
		}
	}
	stop()
	return "", 0, "", nil, fmt.Errorf("%s printed no address", strings.Join(argv, " "))
}

// takeProfiles writes the server's CPU profile and the allocations it
// made over the next profileSecs seconds to DIR/run.cpu.pprof and
// DIR/run.allocs.pprof.
func (b *bench) takeProfiles(base, run string) error {
	errs := make(chan error, 2)
	for _, p := range []struct{ path, file string }{
		{"profile", run + ".cpu.pprof"},
		{"allocs", run + ".allocs.pprof"},
	} {
		go func() {
			resp, err := http.Get(fmt.Sprintf("%s%s?seconds=%d", base, p.path, b.profileSecs))
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("%s: %s: %.200s", p.path, resp.Status, data)
			}
			if err == nil {
				err = os.WriteFile(filepath.Join(b.profile, p.file), data, 0o644)
			}
			errs <- err
		}()
	}
	return errors.Join(<-errs, <-errs)
}

// session is one client, spoken for with plain JSON-RPC POSTs: an MCP
// session, or with stateless requests of protocol 2026-07-28.
type session struct {
	url, id   string
	c         *http.Client
	n         int
	token     string // a bearer token to send, if any
	stateless bool
}

// statelessVersion is the MCP protocol without sessions.
const statelessVersion = "2026-07-28"

// connect initializes an MCP session.
func (s *session) connect() error {
	err := s.post("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "mcp-bench", "version": "v0"},
	}, nil)
	if err == nil {
		err = s.post("notifications/initialized", map[string]any{}, nil)
	}
	return err
}

func (s *session) callTool(name string, args any, result any) error {
	return s.post("tools/call", map[string]any{"name": name, "arguments": args}, result)
}

// post sends one JSON-RPC message and decodes the result of a request into
// result. The response is one JSON object, or an event stream whose
// message event holds it.
func (s *session) post(method string, params, result any) error {
	if s.stateless {
		// What a client of protocol 2026-07-28 sends in place of the
		// initialize it no longer makes.
		p := params.(map[string]any)
		p["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    statelessVersion,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "mcp-bench", "version": "v0"},
		}
	}
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
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	if s.stateless {
		req.Header.Set("Mcp-Protocol-Version", statelessVersion)
		req.Header.Set("Mcp-Method", method)
		if name, ok := params.(map[string]any)["name"].(string); ok && method == "tools/call" {
			req.Header.Set("Mcp-Name", name)
		}
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
	if s.id == "" && !s.stateless {
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
