// Package wrap rewrites an MCP client's JSON configuration so that every
// server in it runs behind `scrollback proxy`, and back.
//
// It knows where the clients keep their servers: "mcpServers" (Claude
// Code's .mcp.json and ~/.claude.json, whose "projects" each have their
// own "mcpServers" too; Claude Desktop; Cursor; Windsurf; Gemini CLI),
// "servers" (VS Code's mcp.json) and "mcp"."servers" (VS Code's
// settings.json). A command server
//
//	{"command": "npx", "args": ["-y", "server"]}
//
// becomes {"command": "scrollback", "args": ["proxy", "--", "npx", "-y",
// "server"]}; its other fields (env, cwd, type, ...) stay as they are, in
// their order. A URL server ("url", Windsurf's "serverUrl", Gemini's
// "httpUrl") becomes a command server running `scrollback proxy --url URL`,
// its headers passed in the SCROLLBACK_PROXY_HEADERS environment variable
// (not on the command line), and its original entry kept under
// "x-scrollback-original" so that Unwrap restores it exactly. A server
// over the older SSE transport is left alone (the proxy speaks streamable
// HTTP), and so is one already wrapped: Wrap is idempotent.
//
// Every other part of the file passes through: unknown fields survive,
// and keys keep their order. Whitespace is re-indented like the original.
package wrap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// OriginalKey holds a wrapped URL server's original entry.
const OriginalKey = "x-scrollback-original"

// HeadersEnv is the environment variable through which a wrapped URL
// server's headers reach `scrollback proxy`: one "Name: value" a line.
const HeadersEnv = "SCROLLBACK_PROXY_HEADERS"

// Options configures Wrap and Unwrap.
type Options struct {
	// Command is how the client starts scrollback; "" = "scrollback".
	Command string
	// Gemini reads the file as Gemini CLI's settings.json, where "url"
	// means the SSE transport ("httpUrl" is streamable HTTP).
	Gemini bool
}

// Change is what happened to one server.
type Change struct {
	Path   string // where the server is, e.g. "mcpServers.github" or "projects./home/me/app.mcpServers.db"
	Action string // "wrapped", "unwrapped", "already wrapped", "not wrapped", "skipped"
	Reason string // why it was skipped
}

// Result is a rewritten configuration.
type Result struct {
	Out     []byte   // the new file; equal to the input when nothing changed
	Changed bool     // some server was rewritten
	Changes []Change // one per server found, in file order
}

// ErrNoServers is returned for a configuration with no server list.
var ErrNoServers = errors.New("wrap: no MCP servers found: expected \"mcpServers\" (Claude Code, Claude Desktop, Cursor, Windsurf, Gemini CLI), \"servers\" (VS Code mcp.json) or \"mcp\".\"servers\" (VS Code settings.json) at the top level")

// Wrap puts every server of the configuration behind the proxy.
func Wrap(config []byte, opts Options) (Result, error) { return rewrite(config, opts, true) }

// Unwrap restores every server wrapped by Wrap.
func Unwrap(config []byte, opts Options) (Result, error) { return rewrite(config, opts, false) }

func rewrite(config []byte, opts Options, wrap bool) (Result, error) {
	if opts.Command == "" {
		opts.Command = "scrollback"
	}
	top, err := parseObject(config)
	if err != nil {
		return Result{}, fmt.Errorf("wrap: the file is not a JSON object: %w", err)
	}
	var res Result
	found := false
	// each rewrites the servers object at top[key] (or nested), in place.
	servers := func(obj *object, key, path string) error {
		i := obj.index(key)
		if i < 0 {
			return nil
		}
		list, err := parseObject(obj.members[i].val)
		if err != nil {
			return fmt.Errorf("wrap: %s is not an object of servers: %w", path+key, err)
		}
		found = true
		changed := false
		for j, m := range list.members {
			entry, err := parseObject(m.val)
			if err != nil {
				res.Changes = append(res.Changes, Change{Path: path + key + "." + m.key, Action: "skipped", Reason: "not an object"})
				continue
			}
			c := Change{Path: path + key + "." + m.key}
			var out *object
			if wrap {
				out, c.Action, c.Reason = wrapEntry(entry, opts)
			} else {
				out, c.Action, c.Reason = unwrapEntry(entry, opts)
			}
			res.Changes = append(res.Changes, c)
			if out != nil {
				list.members[j].val = out.encode()
				changed = true
			}
		}
		if changed {
			obj.members[i].val = list.encode()
			res.Changed = true
		}
		return nil
	}
	for _, key := range []string{"mcpServers", "servers"} {
		if err := servers(top, key, ""); err != nil {
			return Result{}, err
		}
	}
	if i := top.index("mcp"); i >= 0 {
		if mcp, err := parseObject(top.members[i].val); err == nil {
			if err := servers(mcp, "servers", "mcp."); err != nil {
				return Result{}, err
			}
			top.members[i].val = mcp.encode()
		}
	}
	if i := top.index("projects"); i >= 0 {
		if projects, err := parseObject(top.members[i].val); err == nil {
			for j, pm := range projects.members {
				proj, err := parseObject(pm.val)
				if err != nil {
					continue
				}
				if err := servers(proj, "mcpServers", "projects."+pm.key+"."); err != nil {
					return Result{}, err
				}
				projects.members[j].val = proj.encode()
			}
			top.members[i].val = projects.encode()
		}
	}
	if !found {
		return Result{}, ErrNoServers
	}
	if !res.Changed {
		res.Out = config
		return res, nil
	}
	var b bytes.Buffer
	if err := json.Indent(&b, top.encode(), "", indentOf(config)); err != nil {
		return Result{}, err
	}
	b.WriteByte('\n')
	res.Out = b.Bytes()
	return res, nil
}

// wrapEntry returns the wrapped form of a server entry, or nil with why not.
func wrapEntry(e *object, opts Options) (*object, string, string) {
	if wrapped(e, opts) {
		return nil, "already wrapped", ""
	}
	if cmd, ok := e.str("command"); ok {
		var args []string
		if i := e.index("args"); i >= 0 {
			if err := json.Unmarshal(e.members[i].val, &args); err != nil {
				return nil, "skipped", "its args are not a list of strings"
			}
		}
		out := e.clone()
		out.set("command", mustJSON(opts.Command))
		out.set("args", mustJSON(append([]string{"proxy", "--", cmd}, args...)))
		return out, "wrapped", ""
	}
	urlKey := ""
	for _, k := range []string{"url", "serverUrl", "httpUrl"} {
		if _, ok := e.str(k); ok {
			urlKey = k
			break
		}
	}
	if urlKey == "" {
		return nil, "skipped", "it has neither a command nor a URL"
	}
	typ, _ := e.str("type")
	if typ == "sse" || (urlKey == "url" && opts.Gemini) {
		return nil, "skipped", "it uses the SSE transport, which the proxy does not speak (streamable HTTP only)"
	}
	url, _ := e.str(urlKey)
	out := &object{}
	if typ != "" {
		out.set("type", mustJSON("stdio"))
	}
	out.set("command", mustJSON(opts.Command))
	out.set("args", mustJSON([]string{"proxy", "--url", url}))
	if i := e.index("headers"); i >= 0 {
		var h map[string]string
		if err := json.Unmarshal(e.members[i].val, &h); err != nil {
			return nil, "skipped", "its headers are not an object of strings"
		}
		names := make([]string, 0, len(h))
		for k := range h {
			names = append(names, k)
		}
		sort.Strings(names)
		var lines []string
		for _, k := range names {
			lines = append(lines, k+": "+h[k])
		}
		out.set("env", mustJSON(map[string]string{HeadersEnv: strings.Join(lines, "\n")}))
	}
	// Fields the proxy entry can keep as they are (a name, a timeout,
	// Gemini's trust or tool filters, ...).
	for _, m := range e.members {
		switch m.key {
		case "type", "url", "serverUrl", "httpUrl", "headers", "command", "args", "env":
			continue
		}
		out.members = append(out.members, m)
	}
	out.set(OriginalKey, e.encode())
	return out, "wrapped", ""
}

// unwrapEntry returns the original form of a wrapped entry.
func unwrapEntry(e *object, opts Options) (*object, string, string) {
	if !wrapped(e, opts) {
		return nil, "not wrapped", ""
	}
	if i := e.index(OriginalKey); i >= 0 {
		orig, err := parseObject(e.members[i].val)
		if err != nil {
			return nil, "skipped", "its " + OriginalKey + " is not an object"
		}
		return orig, "unwrapped", ""
	}
	var args []string
	json.Unmarshal(e.members[e.index("args")].val, &args)
	sep := -1
	for i, a := range args {
		if a == "--" {
			sep = i
			break
		}
	}
	if sep < 0 || sep+1 >= len(args) {
		return nil, "skipped", "its proxy command has no upstream command after --"
	}
	out := e.clone()
	out.set("command", mustJSON(args[sep+1]))
	if rest := args[sep+2:]; len(rest) > 0 {
		out.set("args", mustJSON(rest))
	} else {
		out.remove("args")
	}
	return out, "unwrapped", ""
}

// wrapped reports whether an entry already runs `scrollback proxy`.
func wrapped(e *object, opts Options) bool {
	cmd, ok := e.str("command")
	if !ok || (cmd != opts.Command && filepath.Base(cmd) != "scrollback") {
		return false
	}
	i := e.index("args")
	if i < 0 {
		return false
	}
	var args []string
	return json.Unmarshal(e.members[i].val, &args) == nil && len(args) > 0 && args[0] == "proxy"
}

// indentOf guesses the file's indentation from its first indented line.
func indentOf(b []byte) string {
	for _, line := range bytes.Split(b, []byte("\n"))[1:] {
		t := bytes.TrimLeft(line, " \t")
		if n := len(line) - len(t); n > 0 && len(t) > 0 {
			return string(line[:n])
		}
	}
	return "  "
}

func mustJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // strings and lists of strings always encode
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// object is a JSON object whose members keep their order.
type object struct{ members []member }

type member struct {
	key string
	val json.RawMessage
}

func parseObject(raw []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not an object")
	}
	o := &object{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		if i := o.index(key); i >= 0 {
			o.members[i].val = val // a repeated key: the last wins, as in encoding/json
			continue
		}
		o.members = append(o.members, member{key, val})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("more after the object")
	}
	return o, nil
}

func (o *object) index(key string) int {
	for i, m := range o.members {
		if m.key == key {
			return i
		}
	}
	return -1
}

func (o *object) str(key string) (string, bool) {
	i := o.index(key)
	if i < 0 {
		return "", false
	}
	var s string
	if json.Unmarshal(o.members[i].val, &s) != nil {
		return "", false
	}
	return s, true
}

// set replaces a member's value in place, or appends the member.
func (o *object) set(key string, val json.RawMessage) {
	if i := o.index(key); i >= 0 {
		o.members[i].val = val
		return
	}
	o.members = append(o.members, member{key, val})
}

func (o *object) remove(key string) {
	if i := o.index(key); i >= 0 {
		o.members = append(o.members[:i], o.members[i+1:]...)
	}
}

func (o *object) clone() *object {
	return &object{members: append([]member(nil), o.members...)}
}

func (o *object) encode() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o.members {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(mustJSON(m.key))
		b.WriteByte(':')
		var c bytes.Buffer
		if json.Compact(&c, m.val) == nil {
			b.Write(c.Bytes())
		} else {
			b.Write(m.val)
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}
