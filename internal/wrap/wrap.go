// Package wrap rewrites an MCP client's configuration so that every server
// in it runs behind `scrollback proxy`, and back.
//
// It reads JSON with comments and trailing commas (JSONC, as VS Code and Zed
// write it) through github.com/tailscale/hujson, and Codex's TOML through
// github.com/pelletier/go-toml/v2. Both are edited in place: only the
// values that change are rewritten, so comments, blank lines, key order,
// indentation and trailing commas everywhere else stay byte for byte as they
// were, and Unwrap after Wrap gives back the original file.
//
// It knows where the clients keep their servers: "mcpServers" (Claude
// Code's .mcp.json and ~/.claude.json, whose "projects" each have their
// own "mcpServers" too; Claude Desktop; Cursor; Windsurf; Gemini CLI),
// "servers" (VS Code's mcp.json), "mcp"."servers" (VS Code's
// settings.json), "context_servers" (Zed's settings.json, with "command"
// either a string or {"path", "args", "env"}) and [mcp_servers.NAME]
// tables (Codex's config.toml). A command server
//
//	{"command": "npx", "args": ["-y", "server"]}
//
// becomes {"command": "/path/to/scrollback", "args": ["proxy", "--",
// "npx", "-y", "server"]}; its other fields (env, cwd, type, ...) stay as
// they are. A URL server ("url", Windsurf's "serverUrl", Gemini's
// "httpUrl") becomes a command server running `scrollback proxy --url URL`,
// its headers passed in the SCROLLBACK_PROXY_HEADERS environment variable
// (not on the command line), and its original entry kept under
// "x-scrollback-original" so that Unwrap restores it exactly. Left alone,
// and reported: a server over the older SSE transport (the proxy speaks
// streamable HTTP), one that already runs `scrollback proxy` (Wrap is
// idempotent) or `scrollback mcp` (its ids would not be readable through
// another session), by any path, through npx or through docker.
package wrap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"reflect"
	"strings"
)

// OriginalKey holds a wrapped URL server's original entry.
const OriginalKey = "x-scrollback-original"

// HeadersEnv is the environment variable through which a wrapped URL
// server's headers reach `scrollback proxy`: one "Name: value" a line.
const HeadersEnv = "SCROLLBACK_PROXY_HEADERS"

// Format is the syntax of a configuration file.
type Format int

const (
	// JSON is JSON, with comments and trailing commas allowed (JSONC).
	JSON Format = iota
	// TOML is Codex's config.toml.
	TOML
)

// Options configures Wrap and Unwrap.
type Options struct {
	// Command is how the client starts scrollback; "" = "scrollback".
	// The CLI passes the absolute path of the running binary: clients
	// such as Claude Desktop do not search the login shell's PATH.
	Command string
	// Gemini reads the file as Gemini CLI's settings.json, where "url"
	// means the SSE transport ("httpUrl" is streamable HTTP).
	Gemini bool
	// Format is the file's syntax (default JSON).
	Format Format
}

// Actions a Change reports.
const (
	Wrapped        = "wrapped"
	Unwrapped      = "unwrapped"
	AlreadyWrapped = "already wrapped"
	NotWrapped     = "not wrapped"
	Skipped        = "skipped"
)

// Change is what happened to one server.
type Change struct {
	Path   string // where the server is, e.g. "mcpServers.github" or "projects./home/me/app.mcpServers.db"
	Action string // Wrapped, Unwrapped, AlreadyWrapped, NotWrapped or Skipped
	Reason string // why it was skipped or left alone
}

// Result is a rewritten configuration.
type Result struct {
	Out     []byte   // the new file; equal to the input when nothing changed
	Changed bool     // some server was rewritten
	Changes []Change // one per server found, in file order
}

// ErrNoServers is returned for a configuration with no server list.
var ErrNoServers = errors.New("wrap: no MCP servers found: expected \"mcpServers\" (Claude Code, Claude Desktop, Cursor, Windsurf, Gemini CLI), \"servers\" (VS Code mcp.json), \"mcp\".\"servers\" (VS Code settings.json) or \"context_servers\" (Zed) at the top level of a JSON file, or [mcp_servers.NAME] tables in a TOML file (Codex)")

// Error is a problem at a place in the file: a syntax error, or a value
// of the wrong kind where the servers should be.
type Error struct {
	Line, Column int // 1-based; Column counts bytes
	Msg          string
}

func (e *Error) Error() string {
	return fmt.Sprintf("wrap: line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// errorAt returns an *Error at byte offset off of b.
func errorAt(b []byte, off int, format string, args ...any) *Error {
	off = min(max(off, 0), len(b))
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	col := 1 + off - (bytes.LastIndexByte(b[:off], '\n') + 1)
	return &Error{Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// Wrap puts every server of the configuration behind the proxy.
func Wrap(config []byte, opts Options) (Result, error) { return rewrite(config, opts, true) }

// Unwrap restores every server wrapped by Wrap.
func Unwrap(config []byte, opts Options) (Result, error) { return rewrite(config, opts, false) }

func rewrite(config []byte, opts Options, wrap bool) (Result, error) {
	if opts.Command == "" {
		opts.Command = "scrollback"
	}
	if opts.Format == TOML {
		return rewriteTOML(config, opts, wrap)
	}
	return rewriteJSON(config, opts, wrap)
}

// runsScrollback tells whether a server's command line runs `scrollback
// proxy` or `scrollback mcp` (by any path, or through npx, bunx, docker,
// ...), and which of the two: it looks for a word naming scrollback (a
// path whose last element is scrollback or scrollback.exe, the npm package
// scrollback@VERSION, an image .../scrollback:TAG) followed by "proxy" or
// "mcp". self is the command Wrap writes, which counts too whatever its
// name.
func runsScrollback(argv []string, self string) (sub string, ok bool) {
	for i := 0; i+1 < len(argv); i++ {
		if (namesScrollback(argv[i]) || argv[i] == self) && (argv[i+1] == "proxy" || argv[i+1] == "mcp") {
			return argv[i+1], true
		}
	}
	return "", false
}

func namesScrollback(word string) bool {
	w := strings.ReplaceAll(word, `\`, "/")
	w = path.Base(w)
	if i := strings.IndexAny(w, "@:"); i > 0 {
		w = w[:i] // scrollback@latest, ghcr.io/scrollback-dev/scrollback:1.2
	}
	w = strings.TrimSuffix(strings.ToLower(w), ".exe")
	return w == "scrollback"
}

// proxyArgs splits the args of a wrapped command server, [proxy FLAGS...
// -- CMD ARGS...], into the upstream's command and args.
func proxyArgs(args []string) (cmd string, rest []string, sep int, ok bool) {
	if len(args) == 0 || args[0] != "proxy" {
		return "", nil, 0, false
	}
	for i, a := range args {
		if a == "--" {
			if i+1 >= len(args) {
				return "", nil, 0, false
			}
			return args[i+1], args[i+2:], i, true
		}
	}
	return "", nil, 0, false
}

// alreadyRuns says what Wrap does with a server that runs scrollback.
func alreadyRuns(sub string) (action, reason string) {
	if sub == "proxy" {
		return AlreadyWrapped, ""
	}
	return Skipped, "it runs scrollback mcp itself: behind the proxy its output ids would belong to another session"
}

// sseReason is why a server over the SSE transport is skipped.
const sseReason = "it uses the SSE transport, which the proxy does not speak (streamable HTTP only)"

// headerLines is a server's headers as SCROLLBACK_PROXY_HEADERS wants
// them: "Name: value" a line, in the order given.
func headerLines(names, values []string) string {
	var lines []string
	for i := range names {
		lines = append(lines, names[i]+": "+values[i])
	}
	return strings.Join(lines, "\n")
}

// verify checks, on the decoded documents, that the rewrite changed the
// servers at the given paths and nothing else: a last guard against losing
// a user's data to a bug in the byte-level edit.
func verify(before, after any, changed [][]string) error {
	for _, p := range changed {
		if !remove(before, p) || !remove(after, p) {
			return fmt.Errorf("wrap: internal error: the server %s is missing after the rewrite; the file was left unchanged", strings.Join(p, "."))
		}
	}
	if !reflect.DeepEqual(before, after) {
		return errors.New("wrap: internal error: the rewrite would change more than the servers; the file was left unchanged")
	}
	return nil
}

// remove deletes the value at path p of a decoded document.
func remove(doc any, p []string) bool {
	for i, k := range p {
		m, ok := doc.(map[string]any)
		if !ok {
			return false
		}
		if i == len(p)-1 {
			_, ok := m[k]
			delete(m, k)
			return ok
		}
		doc = m[k]
	}
	return false
}

// jsonString is s as a JSON string, which is also a valid TOML basic
// string (the escapes JSON uses are a subset of TOML's).
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
