// Command codemodebench measures how fast Code Mode's memory bound stops a
// runaway script, and what it costs, in this process's way (the script in
// the server's process) and in a worker process (codemode.Pool), in the
// same run and under the same load. For each allocation pattern (string
// concatenation, arrays, objects, typed arrays), with the default 256 MiB
// bound:
//
//   - in process: the script runs in a fresh child process of this
//     command, as a server would run it; cross→stop is a range (the heap
//     read counts garbage, so the crossing is known only to lie between
//     the last time the heap read went over the bound and the first
//     collection that found that much live), and the peak RSS is the
//     child's. Beside it, measured just before, is a full collection of a
//     heap of the bound's size in small objects (ref GC ms): the work a
//     verdict on a script growing small objects waits for.
//   - in a worker: this command is the server. The bound is the
//     worker's resident memory: the pool kills the worker once it has
//     grown past the bound from what the pool read when the run started
//     (codemode.WorkerResident). This command reads the worker's
//     /proc/PID/statm every 200 µs; cross→stop is a range: from the first
//     reading past the bound to the run's end, and from the last reading
//     under it (the crossing came after it) to the run's end. When the
//     worker was killed past the bound before a reading here saw it past,
//     only the second is known (shown as 0–hi). "before crossing": the
//     worker was stopped with its resident memory under the bound. data→
//     stop is the same from the first reading that found the worker's
//     data segment (VmData, what RLIMIT_DATA counts: the heap's address
//     space, garbage, memory given back and never touched included) grown
//     past the bound, for reference. line is the error's line, "-" when
//     it has none (the worker was killed: its own watch did not stop the
//     script first). The peak RSS is the worker's (VmHWM), and server ΔRSS
//     is this process's resident memory after the run less before.
//
// -load N starts N busy loops (child processes) for the whole run, on top
// of whatever else the machine runs; the load average is printed before
// each pattern. It exits 1 when a target is missed: in a worker, stopped
// within 1 s of its resident memory crossing the bound, peak RSS at most
// the bound plus 64 MiB, the server's RSS within 16 MiB; in process,
// stopped within 1 s, peak RSS under the bound plus 256 MiB (the
// in-process targets of issue 12). A worker's error message is printed
// under its line when its kind is not memory.
//
//	go run ./bench/codemode/cmd [-n 3] [-pattern objects] [-load 8] [-mode both|inprocess|workers] [-serving]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scrollback-dev/scrollback/codemode"
)

// pattern is one runaway script.
type pattern struct{ name, code string }

// patterns are the runaway scripts, each growing the heap a different way.
var patterns = []pattern{
	{"string", "let s = 'x';\nwhile (true) s += s;"},
	{"string-async", "let s = 'x';\nwhile (true) { s += s; await null; }"},
	{"array", "const a: number[] = [];\nwhile (true) a.push(a.length);"},
	{"arrays", "const a = [];\nwhile (true) a.push([1, 2, 3, 4, 5, 6, 7, 8]);"},
	{"objects", "const a = [];\nfor (let i = 0; ; i++) a.push({id: i, name: 'item ' + i, tags: [i, i + 1]});"},
	{"typed-arrays", "const a = [];\nwhile (true) a.push(new Float64Array(1 << 20));"},
}

// child is what a child process reports.
type child struct {
	Kind     string  `json:"kind"`
	TotalMS  float64 `json:"total_ms"`
	CrossMS  float64 `json:"cross_ms"` // when the heap crossed the bound, from the start
	StopMS   float64 `json:"stop_ms"`  // from crossing to the run's end (an upper bound)
	SeenMS   float64 `json:"seen_ms"`  // from the first collection that found the bound crossed to the end (a lower bound)
	BaseRSS  int64   `json:"base_rss"`
	Crossed  bool    `json:"crossed"`
	ErrorMsg string  `json:"error"`
	Line     int     `json:"line"`
}

func main() {
	codemode.WorkerMain() // this command is its workers' executable too
	runs := flag.Int("n", 3, "runs of each pattern")
	only := flag.String("pattern", "", "run only this pattern")
	mode := flag.String("mode", "both", "inprocess, workers, or both")
	load := flag.Int("load", 0, "start `N` busy loops for the whole run")
	serving := flag.Bool("serving", false, "run the in-process children with the collector settings of scrollback mcp --http (GOGC=400, GOMEMLIMIT=1GiB)")
	childOf := flag.String("child", "", "internal: run one pattern and report it")
	flag.Parse()
	switch *childOf {
	case "":
	case "gc":
		gcReference()
		return
	case "spin":
		for {
		}
	default:
		runChild(*childOf)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	if *load > 0 {
		stopLoad := startLoad(exe, *load)
		defer stopLoad()
		exitHook = stopLoad // os.Exit skips deferred calls
	}
	const bound = codemode.DefaultMaxMemory
	exits := make(chan codemode.WorkerExit, 4)
	pool := codemode.NewPool(codemode.PoolOptions{Size: 1, OnExit: func(e codemode.WorkerExit) { exits <- e }})
	defer pool.Close()
	fmt.Printf("bound %d MiB; targets: stop ≤ 1000 ms after crossing; peak RSS ≤ %d MiB in a worker (< %d MiB in process); server ΔRSS ≤ 16 MiB\n", bound>>20, (bound+64<<20)>>20, (bound+256<<20)>>20)
	fmt.Printf("%-13s %-9s %-7s %4s %9s %22s %11s %9s %11s %9s\n", "pattern", "where", "kind", "line", "total ms", "cross→stop (lo–hi)", "data→stop", "peak RSS", "server ΔRSS", "ref GC ms")
	missed := false
	var ratios []float64
	for _, p := range patterns {
		if *only != "" && p.name != *only {
			continue
		}
		fmt.Printf("-- load average %s\n", loadAvg())
		for i := 0; i < *runs; i++ {
			var in, wk float64 = -1, -1
			if *mode != "workers" {
				var ok bool
				in, ok = runInProcess(exe, p.name, *serving)
				missed = missed || !ok
			}
			if *mode != "inprocess" {
				var ok bool
				wk, ok = runInWorker(pool, exits, p)
				missed = missed || !ok
			}
			if in > 0 && wk > 0 {
				ratios = append(ratios, in/wk)
			}
		}
	}
	if len(ratios) > 0 {
		sort.Float64s(ratios)
		fmt.Printf("in-process cross→stop (hi) ÷ worker cross→stop, per run: median %.0f×, least %.0f× (%d runs that crossed in both)\n", ratios[len(ratios)/2], ratios[0], len(ratios))
	}
	fmt.Printf("load average at the end %s\n", loadAvg())
	if missed {
		exitHook()
		os.Exit(1)
	}
}

// exitHook runs before the command exits with a missed target.
var exitHook = func() {}

// startLoad starts n busy loops and returns the function that ends them.
func startLoad(exe string, n int) (stop func()) {
	var cmds []*exec.Cmd
	for range n {
		cmd := exec.Command(exe, "-child", "spin")
		dieWithParent(cmd)
		if err := cmd.Start(); err != nil {
			log.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	time.Sleep(2 * time.Second) // let the load average see them
	var once sync.Once
	return func() {
		once.Do(func() {
			for _, c := range cmds {
				c.Process.Kill()
				c.Wait()
			}
		})
	}
}

// runInProcess runs pattern name in a fresh child process, the script in
// its own process as a server would, and prints the row; it returns the
// cross→stop upper bound in ms (-1 when it did not cross) and whether the
// targets were met.
func runInProcess(exe, name string, serving bool) (float64, bool) {
	const bound = codemode.DefaultMaxMemory
	ref := gcRef(exe)
	cmd := exec.Command(exe, "-child", name)
	cmd.Stderr = os.Stderr
	if serving {
		cmd.Env = append(os.Environ(), "GOGC=400", "GOMEMLIMIT=1GiB")
	}
	out, err := cmd.Output()
	if err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	var c child
	if err := json.Unmarshal(out, &c); err != nil {
		log.Fatalf("%s: %v: %s", name, err, out)
	}
	peak := peakRSS(cmd.ProcessState)
	// A script stopped before its heap crossed the bound (one huge
	// allocation of half the bound) met the time target.
	ok := c.Kind == "memory" && (!c.Crossed || c.StopMS <= 1000) && peak < bound+256<<20
	stop := fmt.Sprintf("%10.0f–%5.0f ms", c.SeenMS, c.StopMS)
	hi := c.StopMS
	if !c.Crossed {
		stop, hi = "before crossing", -1
	}
	fmt.Printf("%-13s %-9s %-7s %4s %9.0f %22s %11s %5d MiB %11s %9.0f%s\n", name, "process", c.Kind, lineText(c.Line), c.TotalMS, stop, "-", peak>>20, "-", ref, mark(ok))
	return hi, ok
}

// runInWorker runs the pattern in a worker of pool, this process being
// the server, and prints the row; it returns cross→stop in ms (-1 when no
// reading saw the worker past the bound) and whether the targets were
// met.
func runInWorker(pool *codemode.Pool, exits <-chan codemode.WorkerExit, p pattern) (float64, bool) {
	const bound = codemode.DefaultMaxMemory
	runtime.GC()
	debug.FreeOSMemory()
	before := selfRSS()
	var seen memSeen
	done := make(chan struct{})
	watched := make(chan struct{})
	// The script's first step tells this process the worker's pid and
	// its resident memory when the run started, and waits until the
	// worker is being read.
	start := codemode.Tool{Name: "start", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		pid, _ := codemode.WorkerPID(ctx)
		base, ok := codemode.WorkerResident(ctx)
		if !ok {
			close(watched)
			return nil, fmt.Errorf("no resident memory reading of worker %d", pid)
		}
		go watchWorker(pid, base, bound, &seen, done, watched)
		<-watched
		return json.RawMessage(`{}`), nil
	}}
	t0 := time.Now()
	res := pool.Run(context.Background(), "await tools.start({});\n"+p.code, []codemode.Tool{start}, codemode.Options{Timeout: 2 * time.Minute})
	end := time.Now()
	close(done)
	e := <-exits
	runtime.GC()
	debug.FreeOSMemory()
	grew := selfRSS() - before
	kind, line := "none", 0
	if res.Error != nil {
		kind, line = res.Error.Kind, res.Error.Line
	}
	since := func(ns int64) float64 { return float64(end.Sub(time.Unix(0, ns)).Microseconds()) / 1000 }
	seenBy := func(ns int64) int64 {
		if ns > end.UnixNano() {
			return 0 // seen only once the run had returned
		}
		return ns
	}
	stop, ms := "before crossing", -1.0
	first, under := seenBy(seen.rssOver.Load()), seen.rssUnder.Load()
	switch {
	case first != 0:
		ms = since(under)
		stop = fmt.Sprintf("%10.1f–%5.1f ms", since(first), ms)
	case kind == "memory" && line == 0 && strings.Contains(res.Error.Message, "resident memory grew"):
		// Killed by the pool's watch, past the bound, before a reading
		// here saw it past.
		ms = since(under)
		stop = fmt.Sprintf("%10.1f–%5.1f ms", 0.0, ms)
	}
	data := "-"
	if at := seenBy(seen.dataOver.Load()); at != 0 {
		data = fmt.Sprintf("%8.1f ms", since(at))
	}
	ok := kind == "memory" && ms <= 1000 && e.PeakRSS <= bound+64<<20 && grew <= 16<<20
	if kind != "memory" && res.Error != nil {
		defer fmt.Printf("  (%s)\n", res.Error.Message)
	}
	fmt.Printf("%-13s %-9s %-7s %4s %9.0f %22s %11s %5d MiB %7.1f MiB %9s%s\n", p.name, "worker", kind, lineText(line), float64(end.Sub(t0).Microseconds())/1000, stop, data, e.PeakRSS>>20, float64(grew)/(1<<20), "-", mark(ok))
	return ms, ok
}

// lineText is an error's line, "-" when it has none.
func lineText(line int) string {
	if line == 0 {
		return "-"
	}
	return strconv.Itoa(line)
}

// memSeen is what watchWorker saw of a worker (unix ns; 0: never): when
// a reading first found its resident memory past the bound and when one
// last found it under, and when one first found its data segment past.
type memSeen struct{ rssOver, rssUnder, dataOver atomic.Int64 }

func mark(ok bool) string {
	if ok {
		return ""
	}
	return "  MISSED"
}

// watchWorker reads process pid's /proc/PID/statm every 200 µs until
// done, and records in seen when its resident memory first grew past
// bound from base, when it was last under, and when its data segment
// first grew past bound from the first reading.
func watchWorker(pid int, base, bound int64, seen *memSeen, done, watched chan struct{}) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		close(watched) // no /proc: no crossing is seen
		return
	}
	defer f.Close()
	page := int64(os.Getpagesize())
	// read returns the resident memory and the data segment, 0 once the
	// process is gone (an exited process reads 0).
	read := func() (rss, data int64) {
		var buf [256]byte
		n, _ := f.ReadAt(buf[:], 0)
		fields := strings.Fields(string(buf[:n]))
		if len(fields) < 6 {
			return 0, 0
		}
		r, _ := strconv.ParseInt(fields[1], 10, 64)
		d, _ := strconv.ParseInt(fields[5], 10, 64)
		return r * page, d * page
	}
	_, data0 := read()
	seen.rssUnder.Store(time.Now().UnixNano())
	close(watched)
	t := time.NewTicker(200 * time.Microsecond)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			// A reading shows the worker at some moment between before
			// and after: the crossing came after before when it is
			// under, and before after when it is over.
			before := time.Now().UnixNano()
			rss, data := read()
			after := time.Now().UnixNano()
			if rss == 0 {
				continue // gone
			}
			if data-data0 > bound && seen.dataOver.Load() == 0 {
				seen.dataOver.Store(after)
			}
			switch {
			case seen.rssOver.Load() != 0:
			case rss-base > bound:
				seen.rssOver.Store(after)
			default:
				seen.rssUnder.Store(before)
			}
		}
	}
}

// selfRSS is this process's resident memory, from /proc/self/statm.
func selfRSS() int64 { return rss() }

// loadAvg is the machine's load averages over 1, 5 and 15 minutes.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(data))
	if err != nil || len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// gcRef runs the reference in a child process of its own (its heap must
// not count in a pattern's peak RSS) and returns its figure in ms.
func gcRef(exe string) float64 {
	cmd := exec.Command(exe, "-child", "gc")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		log.Fatalf("gc reference: %v", err)
	}
	var ms float64
	if _, err := fmt.Sscan(string(out), &ms); err != nil {
		log.Fatalf("gc reference: %v: %s", err, out)
	}
	return ms
}

// gcReference prints, in ms, how long one full collection of a heap the
// size of the bound, in small objects, takes on this machine now: the
// memory watch's verdict on a script growing many small objects takes one
// or two such collections, so it is the yardstick of cross→stop under the
// machine's load at the moment.
func gcReference() {
	type node struct {
		next *node
		a, b *int
		n    [3]int
	}
	var head *node
	for i := 0; i < codemode.DefaultMaxMemory/48; i++ {
		head = &node{next: head}
	}
	start := time.Now()
	runtime.GC()
	fmt.Println(ms(time.Since(start)))
	runtime.KeepAlive(head)
}

func runChild(name string) {
	code := ""
	for _, p := range patterns {
		if p.name == name {
			code = p.code
		}
	}
	if code == "" {
		log.Fatalf("no pattern %q", name)
	}
	c := child{BaseRSS: rss()}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	heap := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	live := func() uint64 { metrics.Read(sample); return sample[1].Value.Uint64() }
	base := heap()
	start := time.Now()
	// The crossing is the last time the heap went from under the bound to
	// over it: the heap read counts garbage not yet swept, so the script's
	// live data crosses at that moment or later, and the time to stop is
	// measured from the earliest moment it could have crossed. The first
	// collection that finds more than the bound live gives a moment the
	// crossing had surely happened by: the time to stop lies between.
	crossed, seen := make(chan time.Time, 1), make(chan time.Time, 1)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		var last, first time.Time
		over := false
		for {
			select {
			case <-done:
				crossed <- last
				seen <- first
				return
			case <-t.C:
				if l := live(); first.IsZero() && l > base && l-base > codemode.DefaultMaxMemory {
					first = time.Now()
				}
				h := heap()
				now := h > base && h-base > codemode.DefaultMaxMemory
				if now && !over {
					last = time.Now()
				}
				over = now
			}
		}
	}()
	res := codemode.Run(context.Background(), code, nil, codemode.Options{Timeout: 2 * time.Minute})
	end := time.Now()
	close(done)
	c.TotalMS = ms(end.Sub(start))
	if at := <-crossed; !at.IsZero() {
		c.Crossed, c.CrossMS, c.StopMS = true, ms(at.Sub(start)), ms(end.Sub(at))
	}
	if at := <-seen; !at.IsZero() {
		c.SeenMS = ms(end.Sub(at))
	}
	if res.Error != nil {
		c.Kind, c.ErrorMsg, c.Line = res.Error.Kind, res.Error.Message, res.Error.Line
	}
	json.NewEncoder(os.Stdout).Encode(c)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// rss reads the process's resident set from /proc/self/statm.
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, res int64
	fmt.Sscan(string(b), &size, &res)
	return res * int64(os.Getpagesize())
}
