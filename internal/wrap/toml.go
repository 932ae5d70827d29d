package wrap

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Codex's config.toml keeps its servers as [mcp_servers.NAME] tables
// (or inline tables, or dotted keys under [mcp_servers]):
//
//	[mcp_servers.docs]
//	command = "npx"                 # comments stay where they are
//	args = ["-y", "docs-server"]
//	env = { "API_KEY" = "value" }
//
// The file is edited as bytes at the places go-toml's parser reports, so
// every comment, blank line and the quoting of every other value stay as
// they were; only the command's value is replaced and the proxy's words are
// put before the args' first element. A URL server is skipped: Codex
// refuses keys it does not know, so the original entry that Unwrap needs
// could not be kept in the file.

// tomlKV is one key = value of a server, as places in the file.
type tomlKV struct {
	start, end int  // the whole key = value
	keyPrefix  int  // where the key's last part starts (after "name." in a dotted key)
	valStart   int  // where the value starts
	inline     bool // inside an inline table
	kind       unstable.Kind
	str        string     // a String value
	elems      []tomlElem // an Array value's string elements
	notStrings bool       // an Array value has other elements than strings
	keyStart   int
}

type tomlElem struct {
	start, end int
	s          string
}

type tomlServer struct {
	kvs map[string]*tomlKV // by the key's last part: command, args, url, ...
}

type tomlFile struct {
	src      []byte
	opts     Options
	servers  map[string]*tomlServer
	order    []string
	notTable int // the offset of an "mcp_servers" that is not a table, or -1
}

type edit struct {
	start, end int
	text       string
}

func rewriteTOML(config []byte, opts Options, wrap bool) (Result, error) {
	var before map[string]any
	if err := toml.Unmarshal(config, &before); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, col := de.Position()
			return Result{}, &Error{Line: line, Column: col, Msg: "not valid TOML: " + strings.TrimPrefix(de.Error(), "toml: ")}
		}
		return Result{}, fmt.Errorf("wrap: not valid TOML: %w", err)
	}
	f := &tomlFile{src: config, opts: opts, servers: map[string]*tomlServer{}, notTable: -1}
	if err := f.scan(); err != nil {
		return Result{}, err
	}
	all, present := before["mcp_servers"]
	if !present {
		return Result{}, ErrNoServers
	}
	table, ok := all.(map[string]any)
	if !ok {
		return Result{}, errorAt(config, f.notTable, "mcp_servers is %T, not a table of servers by name", all)
	}
	// Servers in file order; any the scan did not place (say, one with
	// only an [mcp_servers.NAME.env] table) after them.
	names := slices.Clone(f.order)
	var rest []string
	for n := range table {
		if !slices.Contains(names, n) {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	names = append(names, rest...)

	var res Result
	var edits []edit
	var changed [][]string
	for _, n := range names {
		c := Change{Path: "mcp_servers." + n}
		s := f.servers[n]
		if s == nil {
			s = &tomlServer{kvs: map[string]*tomlKV{}}
		}
		var es []edit
		if _, ok := table[n].(map[string]any); !ok {
			c.Action, c.Reason = Skipped, "it is not a table"
		} else if wrap {
			es, c.Action, c.Reason = f.wrapServer(s)
		} else {
			es, c.Action, c.Reason = f.unwrapServer(s)
		}
		res.Changes = append(res.Changes, c)
		if len(es) > 0 {
			edits = append(edits, es...)
			changed = append(changed, []string{"mcp_servers", n})
			res.Changed = true
		}
	}
	if !res.Changed {
		res.Out = config
		return res, nil
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].start > edits[j].start })
	out := bytes.Clone(config)
	for _, e := range edits {
		out = slices.Concat(out[:e.start], []byte(e.text), out[e.end:])
	}
	var after map[string]any
	if err := toml.Unmarshal(out, &after); err != nil {
		return Result{}, fmt.Errorf("wrap: internal error: the rewritten file does not decode (%v); the file was left unchanged", err)
	}
	if err := verify(before, after, changed); err != nil {
		return Result{}, err
	}
	res.Out = out
	return res, nil
}

// scan finds each server's keys and their places in the file.
func (f *tomlFile) scan() error {
	p := unstable.Parser{KeepComments: true}
	p.Reset(f.src)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keyOf(e)
		case unstable.KeyValue:
			f.keyValue(append(slices.Clone(table), keyOf(e)...), e, false)
		}
	}
	return p.Error()
}

func (f *tomlFile) keyValue(full []string, e *unstable.Node, inline bool) {
	if len(full) == 0 || full[0] != "mcp_servers" {
		return
	}
	switch len(full) {
	case 1, 2:
		v := e.Value()
		if v.Kind != unstable.InlineTable {
			if len(full) == 1 {
				f.notTable = int(e.Raw.Offset)
			}
			return
		}
		it := v.Children()
		for it.Next() {
			if c := it.Node(); c.Kind == unstable.KeyValue {
				f.keyValue(append(slices.Clone(full), keyOf(c)...), c, true)
			}
		}
	case 3:
		f.record(full[1], full[2], e, inline)
	}
}

func (f *tomlFile) record(server, key string, e *unstable.Node, inline bool) {
	s := f.servers[server]
	if s == nil {
		s = &tomlServer{kvs: map[string]*tomlKV{}}
		f.servers[server] = s
		f.order = append(f.order, server)
	}
	kv := &tomlKV{start: int(e.Raw.Offset), end: int(e.Raw.Offset + e.Raw.Length), inline: inline, keyStart: -1}
	lastEnd := 0
	it := e.Key()
	for it.Next() {
		k := it.Node()
		if kv.keyStart < 0 {
			kv.keyStart = int(k.Raw.Offset)
		}
		kv.keyPrefix = int(k.Raw.Offset)
		lastEnd = int(k.Raw.Offset + k.Raw.Length)
	}
	// The value starts after the '=' and the blanks after it.
	i := lastEnd + max(0, bytes.IndexByte(f.src[lastEnd:kv.end], '=')) + 1
	for i < kv.end && (f.src[i] == ' ' || f.src[i] == '\t') {
		i++
	}
	kv.valStart = i
	v := e.Value()
	kv.kind = v.Kind
	switch v.Kind {
	case unstable.String:
		kv.str = string(v.Data)
		kv.valStart = int(v.Raw.Offset)
	case unstable.Array:
		c := v.Children()
		for c.Next() {
			n := c.Node()
			switch n.Kind {
			case unstable.Comment:
			case unstable.String:
				kv.elems = append(kv.elems, tomlElem{int(n.Raw.Offset), int(n.Raw.Offset + n.Raw.Length), string(n.Data)})
			default:
				kv.notStrings = true
			}
		}
	}
	s.kvs[key] = kv
}

func (f *tomlFile) wrapServer(s *tomlServer) ([]edit, string, string) {
	cmd, args := s.kvs["command"], s.kvs["args"]
	if cmd == nil {
		if s.kvs["url"] != nil {
			return nil, Skipped, "it is a URL server: Codex refuses keys it does not know, so wrap cannot keep the original entry that --unwrap needs; write command = scrollback and args = [\"proxy\", \"--url\", URL] by hand"
		}
		return nil, Skipped, "it has neither a command nor a url"
	}
	if cmd.kind != unstable.String {
		return nil, Skipped, "its command is not a string"
	}
	if args != nil && (args.kind != unstable.Array || args.notStrings) {
		return nil, Skipped, "its args are not a list of strings"
	}
	argv := []string{cmd.str}
	if args != nil {
		for _, e := range args.elems {
			argv = append(argv, e.s)
		}
	}
	if sub, ok := runsScrollback(argv, f.opts.Command); ok {
		action, reason := alreadyRuns(sub)
		return nil, action, reason
	}
	edits := []edit{{cmd.valStart, cmd.end, tomlString(f.opts.Command)}}
	prefix := []string{"proxy", "--", cmd.str}
	switch {
	case args != nil && len(args.elems) > 0:
		// Before the first element, in the list's style: one line, or one
		// element a line.
		e0 := args.elems[0].start
		sep := " "
		if bytes.ContainsRune(f.src[args.valStart:e0], '\n') {
			sep = "\n" + lineIndent(f.src, e0)
		}
		var b strings.Builder
		for _, w := range prefix {
			b.WriteString(tomlString(w) + "," + sep)
		}
		edits = append(edits, edit{e0, e0, b.String()})
	case args != nil:
		edits = append(edits, edit{args.valStart, args.end, tomlList(prefix)})
	default:
		key := string(f.src[cmd.keyStart:cmd.keyPrefix]) + "args = " + tomlList(prefix)
		if cmd.inline {
			edits = append(edits, edit{cmd.end, cmd.end, ", " + key})
		} else {
			// At the end of the command's line, after any comment there.
			eol, nl := len(f.src), "\n"
			if j := bytes.IndexByte(f.src[cmd.end:], '\n'); j >= 0 {
				eol = cmd.end + j
			}
			if eol > cmd.end && f.src[eol-1] == '\r' {
				eol, nl = eol-1, "\r\n"
			}
			edits = append(edits, edit{eol, eol, nl + lineIndent(f.src, cmd.start) + key})
		}
	}
	return edits, Wrapped, ""
}

func (f *tomlFile) unwrapServer(s *tomlServer) ([]edit, string, string) {
	cmd, args := s.kvs["command"], s.kvs["args"]
	if cmd == nil || cmd.kind != unstable.String || (!namesScrollback(cmd.str) && cmd.str != f.opts.Command) || args == nil || args.notStrings || len(args.elems) == 0 || args.elems[0].s != "proxy" {
		return nil, NotWrapped, ""
	}
	words := make([]string, len(args.elems))
	for i, e := range args.elems {
		words[i] = e.s
	}
	up, rest, sep, ok := proxyArgs(words)
	if !ok {
		return nil, Skipped, "its proxy command has no upstream command after --"
	}
	edits := []edit{{cmd.valStart, cmd.end, tomlString(up)}}
	if len(rest) > 0 {
		return append(edits, edit{args.elems[0].start, args.elems[sep+2].start, ""}), Unwrapped, ""
	}
	// The args were the proxy's alone: take the key out again.
	if args.inline {
		i := args.start
		for i > 0 && (f.src[i-1] == ' ' || f.src[i-1] == '\t') {
			i--
		}
		if i > 0 && f.src[i-1] == ',' {
			return append(edits, edit{i - 1, args.end, ""}), Unwrapped, ""
		}
		return append(edits, edit{args.start, args.end, ""}), Unwrapped, ""
	}
	ls := bytes.LastIndexByte(f.src[:args.start], '\n') + 1
	end := args.end
	for end < len(f.src) && (f.src[end] == ' ' || f.src[end] == '\t' || f.src[end] == '\r') {
		end++
	}
	switch {
	case len(bytes.TrimSpace(f.src[ls:args.start])) != 0:
		return append(edits, edit{args.start, args.end, ""}), Unwrapped, ""
	case end == len(f.src) && ls > 0:
		return append(edits, edit{ls - 1, end, ""}), Unwrapped, ""
	case end < len(f.src) && f.src[end] == '\n':
		return append(edits, edit{ls, end + 1, ""}), Unwrapped, ""
	}
	return append(edits, edit{args.start, args.end, ""}), Unwrapped, ""
}

// tomlList is a one-line TOML array of strings.
func tomlList(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = tomlString(w)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// tomlString quotes s as a TOML string: a literal string ('C:\path') when
// s has backslashes that a basic string would double, else a basic one.
func tomlString(s string) string {
	if strings.Contains(s, `\`) && !strings.ContainsAny(s, "'\n\r\t") && !strings.ContainsFunc(s, unicode.IsControl) {
		return "'" + s + "'"
	}
	return jsonString(s)
}

// keyOf is the parts of a table's or key-value's (dotted) key.
func keyOf(n *unstable.Node) []string {
	var parts []string
	it := n.Key()
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}
