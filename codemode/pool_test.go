package codemode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback/codemode/internal/procmem"
	"github.com/scrollback-dev/scrollback/present"
)

// fakeEnv makes the test binary, started as a worker, misbehave in the way
// it names instead of serving (see fakeWorker).
const fakeEnv = "CODEMODE_TEST_FAKE_WORKER"

// TestMain lets the test binary serve as a Code Mode worker when a Pool
// starts it (the default command: this executable with WorkerArg), or
// play a broken worker for the tests of the pool's faults.
func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeWorker(mode))
	}
	WorkerMain()
	os.Exit(m.Run())
}

// fakeWorker plays a broken worker: "hang" says hello and then never
// answers; "huge" says hello and then sends a frame over the size limit;
// "crash" says hello, writes to stderr and exits 3 when it gets its run;
// "nohello" is a program that does not serve workers at all.
func fakeWorker(mode string) int {
	out := bufio.NewWriter(os.Stdout)
	if mode == "nohello" {
		fmt.Println("usage: someprogram [flags]")
		return 0
	}
	writeFrame(out, &frame{T: "hello", PID: os.Getpid()}, nil)
	in := bufio.NewReader(os.Stdin)
	if _, _, err := readFrame(in, maxBody); err != nil {
		return 1
	}
	switch mode {
	case "hang":
		select {}
	case "huge":
		var lens [8]byte
		binary.BigEndian.PutUint32(lens[:4], 2)
		binary.BigEndian.PutUint32(lens[4:], 1<<30)
		out.Write(lens[:])
		out.Flush()
		select {}
	case "crash":
		fmt.Fprintln(os.Stderr, "panic: something went wrong in the worker")
		return 3
	}
	return 1
}

// fakePool is a pool whose workers are fake ones of the given mode.
func fakePool(t *testing.T, mode string) *Pool {
	t.Helper()
	p := NewPool(PoolOptions{Command: func() (*exec.Cmd, error) {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(exe, WorkerArg)
		cmd.Env = append(os.Environ(), fakeEnv+"="+mode)
		return cmd, nil
	}})
	t.Cleanup(func() { p.Close() })
	return p
}

// testPool is a pool of real workers of this test binary.
func testPool(t *testing.T, size int) *Pool {
	t.Helper()
	p := NewPool(PoolOptions{Size: size})
	t.Cleanup(func() { p.Close() })
	return p
}

var echo = Tool{Name: "echo", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) { return args, nil }}

func TestPoolRuns(t *testing.T) {
	p := testPool(t, 1)
	res := p.Run(context.Background(), "const r = await tools.echo({a: 1}); console.log('hi'); return r.a + 1", []Tool{echo}, Options{})
	if res.Error != nil || string(res.Value) != "2" || res.Logs != "hi\n" || res.Calls != 1 || !res.Complete {
		t.Fatalf("result %+v, error %v", res, res.Error)
	}
	res = p.Run(context.Background(), "console.log('nothing returned')", nil, Options{})
	if res.Error != nil || res.Value != nil {
		t.Errorf("a script returning nothing: value %q, error %v", res.Value, res.Error)
	}
	res = p.Run(context.Background(), "return ''", nil, Options{})
	if res.Error != nil || res.Value == nil || len(res.Value) != 0 {
		t.Errorf("a script returning '': value %#v, error %v", res.Value, res.Error)
	}
}

// TestPoolBridge: the bridge rule is applied in the server, before the
// worker sees the result: the copy is saved by the server's Save, listed
// in Retained, and the script receives the value unchanged.
func TestPoolBridge(t *testing.T) {
	p := testPool(t, 1)
	big := Tool{Name: "big", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		return json.Marshal(strings.Repeat("0123456789", 10000) + "END")
	}}
	own := Tool{Name: "own", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"output_id":"out_own","totalBytes":5,"complete":false}`), nil
	}}
	fail := Tool{Name: "fail", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("fail: no such thing")
	}}
	var saved []Copy
	save := func(ctx context.Context, c Copy) (string, error) {
		saved = append(saved, c)
		return fmt.Sprintf("out_%d", len(saved)), nil
	}
	code := `const s = await tools.big({q: "x"});
const o = tools.own({});
let msg = "";
try { await tools.fail({}) } catch (e) { msg = e.message }
return {len: s.length, end: s.slice(-3), own: o.output_id, msg};`
	res := p.Run(context.Background(), code, []Tool{big, own, fail}, Options{Save: save})
	if res.Error != nil {
		t.Fatal(res.Error)
	}
	if want := `{"len":100003,"end":"END","own":"out_own","msg":"tools.fail: no such thing"}`; string(res.Value) != want {
		t.Errorf("value %s, want %s", res.Value, want)
	}
	if len(saved) != 1 || saved[0].Call != 1 || saved[0].Tool != "big" || len(saved[0].Text) != 100003 || string(saved[0].Args) != `{"q":"x"}` {
		t.Fatalf("saved %+v", saved)
	}
	want := []Ref{{Call: 1, Tool: "big", OutputID: "out_1", TotalBytes: 100003, Complete: true, Holds: present.HoldsResult},
		{Call: 2, Tool: "own", OutputID: "out_own", TotalBytes: 5, Holds: present.HoldsOutput}}
	if fmt.Sprint(res.Retained) != fmt.Sprint(want) {
		t.Errorf("retained %+v, want %+v", res.Retained, want)
	}
}

// TestPoolFreshWorkers: each script runs in a process of its own, so
// nothing one leaves behind reaches the next.
func TestPoolFreshWorkers(t *testing.T) {
	p := testPool(t, 2)
	pid := Tool{Name: "pid", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		return json.Marshal(ctx.Value(workerPIDKey{}))
	}}
	first := p.Run(context.Background(), "globalThis.leak = 42; Object.prototype.polluted = 1; Array.prototype.push = null; return tools.pid({})", []Tool{pid}, Options{})
	second := p.Run(context.Background(), "return [typeof leak, typeof ({}).polluted, typeof [].push, tools.pid({})]", []Tool{pid}, Options{})
	if first.Error != nil || second.Error != nil {
		t.Fatal(first.Error, second.Error)
	}
	var got []any
	json.Unmarshal(second.Value, &got)
	if len(got) != 4 || got[0] != "undefined" || got[1] != "undefined" || got[2] != "function" {
		t.Errorf("the second script saw %s", second.Value)
	}
	if fmt.Sprint(got[3]) == string(first.Value) {
		t.Errorf("both scripts ran in worker %s", first.Value)
	}
}

// TestPoolWorkerKilled: a worker killed with SIGKILL in the middle of its
// script is the script's error, naming it; the next script runs.
func TestPoolWorkerKilled(t *testing.T) {
	p := testPool(t, 1)
	kill := Tool{Name: "kill_worker", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		pid := ctx.Value(workerPIDKey{}).(int)
		proc, err := os.FindProcess(pid)
		if err != nil {
			return nil, err
		}
		return json.RawMessage(`{}`), proc.Kill()
	}}
	res := p.Run(context.Background(), "console.log('before');\nawait tools.kill_worker({});\nwhile (true) {}", []Tool{kill}, Options{})
	if res.Error == nil || res.Error.Kind != "worker" || !errors.Is(res.Error, ErrWorker) || !strings.Contains(res.Error.Message, "worker process (pid ") {
		t.Fatalf("error %+v, want kind worker naming the process", res.Error)
	}
	if runtime.GOOS != "windows" && !strings.Contains(res.Error.Message, "killed by SIGKILL") {
		t.Errorf("error %q does not say SIGKILL", res.Error.Message)
	}
	if res.Retained == nil {
		t.Error("retained is nil, want []")
	}
	res = p.Run(context.Background(), "return 1", nil, Options{})
	if res.Error != nil || string(res.Value) != "1" {
		t.Fatalf("the next script: %+v", res)
	}
}

// TestPoolTimeLimits: a loop ends at its time limit, stopped by the
// worker (with its line) and, when the worker does not answer, by the
// server killing it.
func TestPoolTimeLimits(t *testing.T) {
	res := testPool(t, 1).Run(context.Background(), "let n = 0;\nwhile (true) { n++ }", nil, Options{Timeout: 200 * time.Millisecond})
	if res.Error == nil || res.Error.Kind != "timeout" || res.Error.Line != 2 {
		t.Errorf("the worker's own stop: %+v, want kind timeout at line 2", res.Error)
	}
	res = fakePool(t, "hang").Run(context.Background(), "return 1", nil, Options{Timeout: 100 * time.Millisecond})
	if res.Error == nil || res.Error.Kind != "timeout" || !errors.Is(res.Error, ErrTimeout) || !strings.Contains(res.Error.Message, "killed") {
		t.Errorf("a worker that never answers: %+v, want kind timeout, killed", res.Error)
	}
}

// TestPoolCanceled: the caller's cancel kills the worker and says so.
func TestPoolCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stop := Tool{Name: "stop", Call: func(context.Context, json.RawMessage) (json.RawMessage, error) {
		cancel()
		return json.RawMessage(`{}`), nil
	}}
	res := testPool(t, 1).Run(ctx, "tools.stop({});\nwhile (true) {}", []Tool{stop}, Options{})
	if res.Error == nil || res.Error.Kind != "canceled" {
		t.Errorf("error %+v, want kind canceled", res.Error)
	}
}

// TestPoolBrokenWorkers: a worker that crashes, sends garbage, or a
// program that does not serve workers at all, is a clear error.
func TestPoolBrokenWorkers(t *testing.T) {
	tests := []struct{ mode, want string }{
		{"crash", "exited with status 3: panic: something went wrong in the worker"},
		{"huge", "frame over the size limit"},
		{"nohello", "must call codemode.WorkerMain"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			res := fakePool(t, tt.mode).Run(context.Background(), "return 1", nil, Options{})
			if res.Error == nil || res.Error.Kind != "worker" || !strings.Contains(res.Error.Message, tt.want) {
				t.Errorf("error %+v, want kind worker with %q", res.Error, tt.want)
			}
		})
	}
}

// TestPoolConcurrent: runs at once each get a worker of their own.
func TestPoolConcurrent(t *testing.T) {
	p := testPool(t, 1)
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for i := range 4 {
		wg.Go(func() {
			res := p.Run(context.Background(), fmt.Sprintf("return await tools.echo({n: %d})", i), []Tool{echo}, Options{})
			if res.Error != nil || string(res.Value) != fmt.Sprintf(`{"n":%d}`, i) {
				errs <- fmt.Sprintf("run %d: %s %v", i, res.Value, res.Error)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestPoolClosed: a closed pool runs nothing, and says so.
func TestPoolClosed(t *testing.T) {
	p := NewPool(PoolOptions{Size: 1})
	p.Close()
	res := p.Run(context.Background(), "return 1", nil, Options{})
	if res.Error == nil || res.Error.Kind != "worker" || !strings.Contains(res.Error.Message, "closed") {
		t.Errorf("error %+v", res.Error)
	}
}

// TestPoolRunaways: every allocation pattern stops with the memory kind,
// its worker's peak resident memory stays within the bound plus the
// headroom, and the server's own memory does not grow with it.
func TestPoolRunaways(t *testing.T) {
	if testing.Short() {
		t.Skip("grows six workers to their memory bound")
	}
	exits := make(chan WorkerExit, 16)
	p := NewPool(PoolOptions{Size: 1, OnExit: func(e WorkerExit) { exits <- e }})
	defer p.Close()
	self, err := procmem.Open(os.Getpid())
	if err != nil {
		t.Skip("no resident memory reading here:", err)
	}
	defer self.Close()
	p.Run(context.Background(), "return 1", nil, Options{}) // the pool's own start, before the baseline
	<-exits
	debug.FreeOSMemory()
	before, _ := self.Resident()
	for _, pat := range runaways {
		t.Run(pat.name, func(t *testing.T) {
			// A busy machine must not turn the memory stop into a timeout.
			res := p.Run(context.Background(), pat.code, nil, Options{Timeout: 10 * time.Minute})
			// Whichever stopped it (the worker's own watch, the
			// server's, the operating system), the model is told the
			// limit in MiB.
			if res.Error == nil || res.Error.Kind != "memory" || !errors.Is(res.Error, ErrMemory) || !strings.Contains(res.Error.Message, "memory limit exceeded") || !strings.Contains(res.Error.Message, fmt.Sprintf("%d MiB", DefaultMaxMemory>>20)) {
				t.Errorf("error %+v, want kind memory, naming the %d MiB bound", res.Error, DefaultMaxMemory>>20)
			}
			e := <-exits
			if runtime.GOOS != "windows" && e.PeakRSS > DefaultMaxMemory+64<<20 {
				t.Errorf("the worker peaked at %d MiB resident, over the bound plus 64 MiB", e.PeakRSS>>20)
			}
		})
	}
	debug.FreeOSMemory()
	after, _ := self.Resident()
	if after-before > 16<<20 {
		t.Errorf("the server's resident memory grew from %d to %d MiB over the runaways", before>>20, after>>20)
	}
}

// runaways are scripts growing the heap without end, each a different
// way (bench/codemode runs the same).
var runaways = []struct{ name, code string }{
	{"string", "let s = 'x';\nwhile (true) s += s;"},
	{"string-async", "let s = 'x';\nwhile (true) { s += s; await null; }"},
	{"array", "const a: number[] = [];\nwhile (true) a.push(a.length);"},
	{"arrays", "const a = [];\nwhile (true) a.push([1, 2, 3, 4, 5, 6, 7, 8]);"},
	{"objects", "const a = [];\nfor (let i = 0; ; i++) a.push({id: i, name: 'item ' + i, tags: [i, i + 1]});"},
	{"typed-arrays", "const a = [];\nwhile (true) a.push(new Float64Array(1 << 20));"},
}

// TestNoFileAccess: no path goja offers reaches a file: a script trying
// each gets an error or nothing, never the file's text, in a worker and
// in this process alike.
func TestNoFileAccess(t *testing.T) {
	attempts := []string{
		"return require('fs').readFileSync('/etc/passwd', 'utf8')",
		"return await import('/etc/passwd')",
		"return process.binding('fs')",
		"return await fetch('file:///etc/passwd')",
		"return Deno.readTextFileSync('/etc/passwd')",
		"return load('/etc/passwd')",
		"return readFile('/etc/passwd')",
		"return new Worker('/etc/passwd')",
		"return (function(){}).constructor('return typeof require')()",
		"return globalThis.constructor.constructor('return this')().process",
		"return Object.keys(globalThis).filter(k => /file|fs|read|open|require|process|import/i.test(k))",
	}
	for _, mode := range []struct {
		name string
		run  func(code string) Result
	}{
		{"worker", func(code string) Result { return testPool(t, 0).Run(context.Background(), code, nil, Options{}) }},
		{"in-process", func(code string) Result { return Run(context.Background(), code, nil, Options{}) }},
	} {
		for _, code := range attempts {
			res := mode.run(code)
			if bytes.Contains(res.Value, []byte("root:")) || strings.Contains(res.Logs, "root:") {
				t.Errorf("%s: %s read the file: %s", mode.name, code, res.Value)
			}
			if res.Error == nil && !slicesContains([]string{"", "[]", "undefined", `"undefined"`}, string(res.Value)) {
				t.Errorf("%s: %s gave %s, want an error or nothing", mode.name, code, res.Value)
			}
		}
	}
}

func slicesContains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// FuzzReadFrame: no input makes readFrame panic or allocate past its
// limits, and what writeFrame writes reads back the same.
func FuzzReadFrame(f *testing.F) {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	writeFrame(w, &frame{T: "call", Tool: "x"}, []byte(`{"a":1}`))
	f.Add(b.Bytes())
	f.Add([]byte{0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff, '{', '}'})
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, body, err := readFrame(bufio.NewReader(bytes.NewReader(data)), 1<<16)
		if err != nil {
			return
		}
		var out bytes.Buffer
		ow := bufio.NewWriter(&out)
		if err := writeFrame(ow, fr, body); err != nil {
			t.Fatal(err)
		}
		fr2, body2, err := readFrame(bufio.NewReader(&out), 1<<16)
		if err != nil || fr2.T != fr.T || fr2.Tool != fr.Tool || !bytes.Equal(body, body2) {
			t.Fatalf("round trip: %+v %q → %+v %q (%v)", fr, body, fr2, body2, err)
		}
	})
}
