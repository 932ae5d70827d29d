package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bigText is big_upstream.mjs's bigText: n bytes of numbered lines.
func bigText(n int) string {
	var b strings.Builder
	for i := 1; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %07d of a large result\n", i)
	}
	return b.String()[:n]
}

// TestProxyBigTypeScriptUpstream puts the proxy in front of an upstream
// made with the TypeScript SDK (which writes "jsonrpc" after "result")
// returning 20 MiB and 100 MiB results: each comes back as a preview whose
// footer names the original size, and the last line of the result is
// readable from the copy.
func TestProxyBigTypeScriptUpstream(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 120 MiB")
	}
	bin, node := setup(t)
	if _, err := os.Stat(filepath.Join("node_modules", "zod", "package.json")); err != nil {
		t.Fatal("e2e/node_modules/zod is missing: run `npm ci --prefix e2e`")
	}
	dir := t.TempDir()
	up, _ := filepath.Abs("big_upstream.mjs")
	cs := proxied(t, bin, dir, node, up)
	for _, size := range []int{20 << 20, 100 << 20} {
		t.Run(fmt.Sprintf("%dMiB", size>>20), func(t *testing.T) {
			res := callTool(t, cs, "big", map[string]any{"n": size})
			pv := textOf(res)
			if res.IsError {
				t.Fatalf("the call failed: %.500s", pv)
			}
			id, _ := res.Meta["scrollback/output_id"].(string)
			total, _ := res.Meta["scrollback/totalBytes"].(float64)
			if id == "" || len(pv) > 8192 || res.Meta["scrollback/complete"] != false {
				t.Fatalf("want a preview with an id and complete=false; got %d bytes, _meta %v", len(pv), res.Meta)
			}
			if !strings.Contains(pv, fmt.Sprint(size)) {
				t.Errorf("the footer does not name the original size %d:\n%s", size, pv[max(0, len(pv)-1500):])
			}
			want := bigText(size)
			lastLine := want[strings.LastIndexByte(want[:len(want)-1], '\n')+1:]
			page := callTool(t, cs, "read_tool_output", map[string]any{"id": id, "offset": max(0, total-4096)})
			got, _ := page.StructuredContent.(map[string]any)["text"].(string)
			if !strings.HasSuffix(got, lastLine) {
				t.Errorf("the copy does not end with the result's last line %q: %q", lastLine, got[max(0, len(got)-200):])
			}
			head := callTool(t, cs, "read_tool_output", map[string]any{"id": id, "offset": 0})
			if got, _ := head.StructuredContent.(map[string]any)["text"].(string); !strings.HasPrefix(want, got) {
				t.Errorf("the copy does not start with the result's head: %.100q", got)
			}
		})
	}
}
