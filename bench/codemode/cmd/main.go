// Command codemodebench measures how fast Code Mode's memory bound stops a
// runaway script, and what it costs the process: for each allocation
// pattern (string concatenation, arrays, objects, typed arrays) it runs
// the script in a fresh child process with the default 256 MiB bound and
// reports the time from the heap crossing the bound to the run's end (as a
// range: the heap read counts garbage, so the crossing is known only to
// lie between the last time the heap read went over the bound and the
// first collection that found that much live), and the child's peak RSS.
// It exits 1 when a target is missed: stopped within 1 s of crossing (the
// range's upper end), peak RSS under the bound plus 256 MiB. Beside each
// run, measured just before it, is a reference for the machine's load at
// the moment: one full collection of a heap of the bound's size in small
// Go objects (ref GC ms), the work a verdict on a script growing small
// objects waits for.
//
//	go run ./bench/codemode/cmd [-n 3] [-pattern string] [-serving]
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
	"runtime/metrics"
	"time"

	"github.com/scrollback-dev/scrollback/codemode"
)

// patterns are the runaway scripts, each growing the heap a different way.
var patterns = []struct{ name, code string }{
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
}

func main() {
	runs := flag.Int("n", 3, "runs of each pattern")
	only := flag.String("pattern", "", "run only this pattern")
	serving := flag.Bool("serving", false, "run the children with the collector settings of scrollback mcp --http (GOGC=400, GOMEMLIMIT=1GiB)")
	childOf := flag.String("child", "", "internal: run one pattern and report it")
	flag.Parse()
	if *childOf == "gc" {
		gcReference()
		return
	}
	if *childOf != "" {
		runChild(*childOf)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	const bound = codemode.DefaultMaxMemory
	fmt.Printf("bound %d MiB; targets: stop ≤ 1000 ms after crossing, peak RSS < %d MiB\n", bound>>20, (bound+256<<20)>>20)
	fmt.Printf("%-13s %-7s %9s %22s %11s %13s %9s\n", "pattern", "kind", "total ms", "cross→stop (lo–hi)", "peak RSS", "RSS at start", "ref GC ms")
	missed := false
	for _, p := range patterns {
		if *only != "" && p.name != *only {
			continue
		}
		for i := 0; i < *runs; i++ {
			ref := gcRef(exe)
			cmd := exec.Command(exe, "-child", p.name)
			cmd.Stderr = os.Stderr
			if *serving {
				cmd.Env = append(os.Environ(), "GOGC=400", "GOMEMLIMIT=1GiB")
			}
			out, err := cmd.Output()
			if err != nil {
				log.Fatalf("%s: %v", p.name, err)
			}
			var c child
			if err := json.Unmarshal(out, &c); err != nil {
				log.Fatalf("%s: %v: %s", p.name, err, out)
			}
			peak := peakRSS(cmd.ProcessState)
			// A script stopped before its heap crossed the bound (one
			// huge allocation of half the bound) met the time target.
			ok := c.Kind == "memory" && (!c.Crossed || c.StopMS <= 1000) && peak < bound+256<<20
			mark := ""
			if !ok {
				mark, missed = "  MISSED", true
			}
			stop := fmt.Sprintf("%10.0f–%5.0f ms", c.SeenMS, c.StopMS)
			if !c.Crossed {
				stop = "before crossing"
			}
			fmt.Printf("%-13s %-7s %9.0f %22s %7d MiB %9d MiB %9.0f%s\n", p.name, c.Kind, c.TotalMS, stop, peak>>20, c.BaseRSS>>20, ref, mark)
		}
	}
	if missed {
		os.Exit(1)
	}
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
		c.Kind, c.ErrorMsg = res.Error.Kind, res.Error.Message
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
