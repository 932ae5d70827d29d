package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestProxyChattyTypeScriptUpstream puts the proxy in front of an upstream
// made with the TypeScript SDK that writes what is not MCP to its stdout
// (console.log of a banner at start and of each call's arguments), as a
// client made with the TypeScript SDK tolerates: the proxy starts, and
// every call succeeds, small or retained, without restarting the upstream.
func TestProxyChattyTypeScriptUpstream(t *testing.T) {
	bin, node := setup(t)
	dir := t.TempDir()
	up, _ := filepath.Abs("big_upstream.mjs")
	cmd := exec.Command(bin, "proxy", "--db", filepath.Join(dir, "sb.db"), "--", node, up)
	cmd.Env = env(dir, "CHATTY=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cs := connectCmd(t, cmd)
	for _, n := range []int{100, 50000, 200} {
		res := callTool(t, cs, "big", map[string]any{"n": n})
		if res.IsError {
			t.Fatalf("n=%d: %s", n, textOf(res))
		}
		if id, _ := res.Meta["scrollback/output_id"].(string); (id != "") != (n > 32768) {
			t.Errorf("n=%d: output_id %q", n, id)
		}
	}
	cs.Close()
	cmd.Wait()
	if !strings.Contains(stderr.String(), "big-upstream: running on stdio") {
		t.Errorf("the banner was not logged on stderr:\n%s", stderr.String())
	}
}
