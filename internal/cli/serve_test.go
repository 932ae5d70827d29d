package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startHTTP runs `scrollback mcp --http 127.0.0.1:0` with args and env
// until the test ends, and returns the URL of its /mcp endpoint.
func startHTTP(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	if env["SCROLLBACK_DB"] == "" {
		env["SCROLLBACK_DB"] = filepath.Join(t.TempDir(), "s.db")
	}
	env["HOME"] = t.TempDir()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, append([]string{"mcp", "--http", "127.0.0.1:0"}, args...),
			IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(k string) string { return env[k] }})
	}()
	t.Cleanup(func() { cancel(); <-done })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if i := strings.Index(stderr.String(), "http://"); i >= 0 {
			if j := strings.IndexAny(stderr.String()[i:], " \n"); j > 0 {
				return stderr.String()[i : i+j]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not start; stderr %q", stderr.String())
		}
	}
}

// TestHTTPIdleConnectionClosed: a kept-alive connection that sends no
// further request is closed once idle past idleConnTimeout, instead of
// holding a descriptor for as long as its other end likes.
func TestHTTPIdleConnectionClosed(t *testing.T) {
	defer func(d time.Duration) { idleConnTimeout = d }(idleConnTimeout)
	idleConnTimeout = 200 * time.Millisecond
	url := startHTTP(t, map[string]string{})
	host := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: "+host+"\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("GET /healthz: %d, close %v; want 200 on a kept-alive connection", resp.StatusCode, resp.Close)
	}
	// The server closes it; the test gives up long after the timeout.
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err = br.ReadByte()
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the idle connection is still open: read %v", err)
	}
}

// TestMetricsAddressLoopbackWithoutToken: without a token the server
// binds loopback addresses only, its --metrics address included: one on
// every interface is refused before anything is served.
func TestMetricsAddressLoopbackWithoutToken(t *testing.T) {
	env := map[string]string{"SCROLLBACK_DB": filepath.Join(t.TempDir(), "s.db"), "HOME": t.TempDir()}
	var stderr syncBuffer
	// Refused at once; were it served, it would stop when ctx ends, with 0.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	code := Main(ctx, []string{"mcp", "--http", "127.0.0.1:0", "--metrics", "0.0.0.0:0"},
		IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(k string) string { return env[k] }})
	if code == 0 || !strings.Contains(stderr.String(), "--metrics") || !strings.Contains(stderr.String(), "not a loopback address") {
		t.Fatalf("exit %d, stderr %q: want a refusal of the --metrics address", code, stderr.String())
	}
	// With a token it may listen anywhere (there /metrics needs the token).
	env["SCROLLBACK_TOKEN"] = "metrics-token-0123456789"
	startHTTP(t, env, "--metrics", "0.0.0.0:0")
}

// TestOAuthDefaultAudienceKeepsHostName: without --oauth-audience, the
// audience (the resource of the Protected Resource Metadata, which a
// client checks against the URL it uses) is the server's URL with the
// host as given: http://localhost:PORT/mcp for --http localhost:0, not
// the address it resolved to.
func TestOAuthDefaultAudienceKeepsHostName(t *testing.T) {
	var iss string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"issuer":"`+iss+`","jwks_uri":"`+iss+`/jwks","authorization_endpoint":"`+iss+`/auth","token_endpoint":"`+iss+`/token","id_token_signing_alg_values_supported":["RS256"]}`)
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"keys":[]}`) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	iss = srv.URL

	ctx, cancel := context.WithCancel(t.Context())
	env := map[string]string{"SCROLLBACK_DB": filepath.Join(t.TempDir(), "s.db"), "HOME": t.TempDir()}
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"mcp", "--http", "localhost:0", "--oauth-issuer", iss},
			IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(k string) string { return env[k] }})
	}()
	t.Cleanup(func() { cancel(); <-done })
	var port string
	for deadline := time.Now().Add(30 * time.Second); port == ""; time.Sleep(5 * time.Millisecond) {
		if _, rest, ok := strings.Cut(stderr.String(), "serving MCP on http://"); ok {
			if hp, _, ok := strings.Cut(rest, "/mcp"); ok {
				_, port, _ = net.SplitHostPort(hp)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not start; stderr %q", stderr.String())
		}
	}
	resp, err := http.Get("http://localhost:" + port + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var meta struct {
		Resource string `json:"resource"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&meta); err != nil {
		t.Fatal(err)
	}
	if want := "http://localhost:" + port + "/mcp"; meta.Resource != want {
		t.Errorf("resource %q, want %q (the host as --http gave it)", meta.Resource, want)
	}
}

// TestMCPDeny: read_file over MCP refuses what mcp's --deny patterns name,
// with the sensitive kind, and reads the rest.
func TestMCPDeny(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"prod.secret", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	url := startHTTP(t, map[string]string{}, "--deny", "*.secret")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, tt := range []struct {
		name string
		kind string // "" when read
	}{
		{"prod.secret", "sensitive"},
		{"notes.txt", ""},
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": filepath.Join(dir, tt.name)}})
		if err != nil {
			t.Fatalf("read_file %s: %v", tt.name, err)
		}
		if kind, _ := res.Meta["scrollback/error_kind"].(string); res.IsError != (tt.kind != "") || kind != tt.kind {
			t.Errorf("read_file %s: isError %v, kind %q; want kind %q", tt.name, res.IsError, kind, tt.kind)
		}
	}
}
