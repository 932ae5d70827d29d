package e2e

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTypeScriptClientAudit runs audit_client.mjs, the official
// TypeScript client, against scrollback mcp over stdio and over HTTP:
// progress keeps a command longer than the client's request timeout
// alive, resources/list shows the session's copies (a cancelled
// command's included), and a null argument's error says null.
func TestTypeScriptClientAudit(t *testing.T) {
	bin, nodeBin := setup(t)
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			db := filepath.Join(dir, "scrollback.db")
			args := []string{"audit_client.mjs", mode, "--", bin, "mcp", "--db", db}
			if mode == "http" {
				args = []string{"audit_client.mjs", mode, "--", startHTTP(t, bin, dir, db)}
			}
			cmd := exec.Command(nodeBin, args...)
			cmd.Env = env(dir)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := run(cmd, 2*time.Minute); err != nil || strings.TrimSpace(stdout.String()) != "ok" {
				t.Fatalf("audit_client.mjs %s: %v\nstdout: %s\nstderr:\n%s", mode, err, stdout.String(), stderr.String())
			}
		})
	}
}
