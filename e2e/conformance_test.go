package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
	"time"
)

// TestConformanceThroughProxy runs the official MCP conformance suite's
// server scenarios (@modelcontextprotocol/conformance, pinned in
// package.json; its 0.1.13 runs on Node 20) against an upstream directly
// and through `scrollback proxy --http ... --url UPSTREAM`, and fails for
// every check that passes directly but not through the proxy. The
// upstream is @modelcontextprotocol/server-everything over streamable
// HTTP. A check may pass through the proxy and not directly (the proxy
// refuses DNS-rebinding hosts, for one); that is logged, not failed.
func TestConformanceThroughProxy(t *testing.T) {
	bin, node := setup(t)
	suite := upstreamBin(t, "@modelcontextprotocol/conformance", "conformance")
	ev := upstreamBin(t, "@modelcontextprotocol/server-everything", "mcp-server-everything")
	dir := t.TempDir()

	upPort, proxyPort := freePort(t), freePort(t)
	up := exec.Command(node, ev, "streamableHttp")
	up.Env = env(dir, fmt.Sprintf("PORT=%d", upPort))
	start(t, up)
	upURL := fmt.Sprintf("http://127.0.0.1:%d/mcp", upPort)
	waitListening(t, upPort)

	px := exec.Command(bin, "proxy", "--db", filepath.Join(dir, "sb.db"), "--http", fmt.Sprintf("127.0.0.1:%d", proxyPort), "--url", upURL)
	px.Env = env(dir)
	start(t, px)
	waitListening(t, proxyPort)

	direct := runSuite(t, node, suite, upURL, filepath.Join(dir, "direct"))
	proxied := runSuite(t, node, suite, fmt.Sprintf("http://127.0.0.1:%d/mcp", proxyPort), filepath.Join(dir, "proxied"))
	if len(direct) == 0 {
		t.Fatal("the suite reported no checks against the upstream")
	}
	passed := 0
	keys := make([]string, 0, len(direct))
	for k := range direct {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		d, p := direct[k], proxied[k]
		switch {
		case d == "SUCCESS" && p != "SUCCESS":
			t.Errorf("%s: passes against the upstream, %s through the proxy", k, orMissing(p))
		case d == "SUCCESS":
			passed++
		case p == "SUCCESS":
			t.Logf("%s: %s against the upstream, passes through the proxy", k, d)
		}
	}
	t.Logf("%d checks pass against the upstream; every one of them passes through the proxy too (%d checks compared)", passed, len(direct))
}

func orMissing(s string) string {
	if s == "" {
		return "missing"
	}
	return s
}

// runSuite runs every active server scenario against url and returns each
// check's status, by "scenario/check id" (repeated ids numbered).
func runSuite(t *testing.T, node, suite, url, out string) map[string]string {
	t.Helper()
	cmd := exec.Command(node, suite, "server", "--url", url, "-o", out)
	cmd.Env = env(filepath.Dir(out))
	b, _ := cmd.CombinedOutput() // it exits non-zero when any check fails
	dirs, _ := filepath.Glob(filepath.Join(out, "server-*", "checks.json"))
	if len(dirs) == 0 {
		t.Fatalf("the conformance suite wrote no results for %s:\n%s", url, b)
	}
	got := map[string]string{}
	for _, f := range dirs {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct{ ID, Status string }
		if err := json.Unmarshal(raw, &checks); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		scenario := filepath.Base(filepath.Dir(f))
		scenario = stamp.ReplaceAllString(scenario, "") // drop the timestamp
		for _, c := range checks {
			if c.Status == "INFO" {
				continue
			}
			k := scenario + "/" + c.ID
			for n := 2; got[k] != ""; n++ {
				k = fmt.Sprintf("%s/%s#%d", scenario, c.ID, n)
			}
			got[k] = c.Status
		}
	}
	return got
}

// stamp is the timestamp the suite adds to a scenario's folder name.
var stamp = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}T[\d-]+Z?$`)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// start starts cmd and kills it when the test ends.
func start(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
}

// waitListening waits until something answers HTTP on the port.
func waitListening(t *testing.T, port int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port)); err == nil {
			res.Body.Close()
			return
		}
	}
	t.Fatalf("nothing listens on port %d after a minute", port)
}
