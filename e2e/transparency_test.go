package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestProxyTransparency: the official TypeScript SDK client drives an
// upstream made with the TypeScript SDK's low-level server
// (transparency_upstream.mjs) directly and through `scrollback proxy`,
// and every probe of transparency_client.mjs must observe the same both
// ways: the lists (in the upstream's order, whatever its pages), log
// messages to a client that never set a level, progress of tools,
// resources/read and prompts/get, JSON-RPC errors with their codes and
// data, completions, _meta both ways, cancellation and setLevel; through
// a stdio proxy and through an HTTP one.
func TestProxyTransparency(t *testing.T) {
	bin, node := setup(t)
	up, err := filepath.Abs("transparency_upstream.mjs")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	observe := func(target ...string) map[string]json.RawMessage {
		t.Helper()
		cmd := exec.Command(node, append([]string{"transparency_client.mjs"}, target...)...)
		cmd.Env = env(dir)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := run(cmd, 2*time.Minute); err != nil {
			t.Fatalf("transparency_client.mjs -- %v: %v\nstderr:\n%s", target, err, stderr.String())
		}
		var obs map[string]json.RawMessage
		if err := json.Unmarshal(stdout.Bytes(), &obs); err != nil {
			t.Fatalf("transparency_client.mjs printed %q: %v", stdout.String(), err)
		}
		return obs
	}
	want := observe("--", node, up)
	stdio := observe("--", bin, "proxy", "--db", filepath.Join(dir, "sb.db"), "--", node, up)
	port := freePort(t)
	px := exec.Command(bin, "proxy", "--db", filepath.Join(dir, "sb.db"), "--http", fmt.Sprintf("127.0.0.1:%d", port), "--", node, up)
	px.Env = env(dir)
	start(t, px)
	waitListening(t, port)
	http := observe("--url", fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		t.Run(k, func(t *testing.T) {
			if !bytes.Equal(stdio[k], want[k]) {
				t.Errorf("through the proxy over stdio %s, directly %s", stdio[k], want[k])
			}
			if !bytes.Equal(http[k], want[k]) {
				t.Errorf("through the proxy over HTTP %s, directly %s", http[k], want[k])
			}
		})
	}
}
