package wrap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tailscale/hujson"
)

// jsonFile is a JSON (or JSONC) configuration being rewritten. Its syntax
// tree keeps every byte of the input, so that what is not rewritten packs
// back as it was.
type jsonFile struct {
	src  []byte
	opts Options
	unit string // one level of indentation, as the file has it
}

func rewriteJSON(config []byte, opts Options, wrap bool) (Result, error) {
	root, err := hujson.Parse(config)
	if err != nil {
		return Result{}, jsonSyntaxError(config, err)
	}
	top, ok := root.Value.(*hujson.Object)
	if !ok {
		return Result{}, errorAt(config, root.StartOffset, "the file holds %s, not a JSON object with the servers", kindName(root.Value.Kind()))
	}
	f := &jsonFile{src: config, opts: opts, unit: indentOf(config)}

	// Where the clients keep their servers.
	type list struct {
		v    *hujson.Value
		path []string
	}
	var lists []list
	for _, key := range []string{"mcpServers", "servers", "context_servers"} {
		if v := member(top, key); v != nil {
			lists = append(lists, list{v, []string{key}})
		}
	}
	if mcp := member(top, "mcp"); mcp != nil {
		if o, ok := mcp.Value.(*hujson.Object); ok {
			if v := member(o, "servers"); v != nil {
				lists = append(lists, list{v, []string{"mcp", "servers"}})
			}
		}
	}
	if projects := member(top, "projects"); projects != nil {
		if o, ok := projects.Value.(*hujson.Object); ok {
			for i := range o.Members {
				p, ok := o.Members[i].Value.Value.(*hujson.Object)
				if !ok {
					continue
				}
				if v := member(p, "mcpServers"); v != nil {
					lists = append(lists, list{v, []string{"projects", name(o.Members[i]), "mcpServers"}})
				}
			}
		}
	}
	if len(lists) == 0 {
		return Result{}, ErrNoServers
	}

	var res Result
	var changed [][]string
	for _, l := range lists {
		servers, ok := l.v.Value.(*hujson.Object)
		if !ok {
			return Result{}, errorAt(config, l.v.StartOffset, "%s holds %s, not an object of servers by name", strings.Join(l.path, "."), kindName(l.v.Value.Kind()))
		}
		for i := range servers.Members {
			m := &servers.Members[i]
			p := append(slices.Clone(l.path), name(*m))
			c := Change{Path: strings.Join(p, ".")}
			entry, ok := m.Value.Value.(*hujson.Object)
			if !ok {
				c.Action, c.Reason = Skipped, "it is "+kindName(m.Value.Value.Kind())+", not an object"
				res.Changes = append(res.Changes, c)
				continue
			}
			var did bool
			var err error
			if wrap {
				did, c.Action, c.Reason, err = f.wrapEntry(m, entry)
			} else {
				did, c.Action, c.Reason, err = f.unwrapEntry(m, entry)
			}
			if err != nil {
				return Result{}, fmt.Errorf("wrap: %s: %w", c.Path, err)
			}
			res.Changes = append(res.Changes, c)
			if did {
				changed = append(changed, p)
				res.Changed = true
			}
		}
	}
	if !res.Changed {
		res.Out = config
		return res, nil
	}
	out := root.Pack()
	before, err1 := decodeJSON(config)
	after, err2 := decodeJSON(out)
	if err1 != nil || err2 != nil {
		return Result{}, fmt.Errorf("wrap: internal error: the rewritten file does not decode (%v, %v); the file was left unchanged", err1, err2)
	}
	if err := verify(before, after, changed); err != nil {
		return Result{}, err
	}
	res.Out = out
	return res, nil
}

// wrapEntry rewrites one server entry in place to run behind the proxy.
func (f *jsonFile) wrapEntry(m *hujson.ObjectMember, e *hujson.Object) (did bool, action, reason string, err error) {
	cmdObj, cmdKey := commandObject(e)
	if cmdV := member(cmdObj, cmdKey); cmdV != nil {
		cmd, ok := str(cmdV)
		if !ok {
			return false, Skipped, "its " + cmdKey + " is not a string", nil
		}
		args, ok := stringsOf(member(cmdObj, "args"))
		if !ok {
			return false, Skipped, "its args are not a list of strings", nil
		}
		if sub, ok := runsScrollback(append([]string{cmd}, args...), f.opts.Command); ok {
			action, reason = alreadyRuns(sub)
			return false, action, reason, nil
		}
		cmdV.Value = hujson.String(f.opts.Command)
		prependArgs(cmdObj, cmdKey, []string{"proxy", "--", cmd})
		return true, Wrapped, "", nil
	}

	urlKey := ""
	for _, k := range []string{"url", "serverUrl", "httpUrl"} {
		if v := member(e, k); v != nil {
			if _, ok := str(v); ok {
				urlKey = k
				break
			}
		}
	}
	if urlKey == "" {
		return false, Skipped, "it has neither a command nor a URL", nil
	}
	typ, _ := str(member(e, "type"))
	if typ == "sse" || (urlKey == "url" && f.opts.Gemini) {
		return false, Skipped, sseReason, nil
	}
	url, _ := str(member(e, urlKey))

	// The new entry, written out at the entry's indentation: a command
	// server, then the fields the proxy entry can keep as they are (a
	// name, a timeout, Gemini's trust or tool filters, ...), then the
	// original entry for Unwrap.
	ind := lineIndent(f.src, m.Name.StartOffset)
	inner := ind + f.unit
	type field struct{ key, val string }
	var fields []field
	if typ != "" {
		fields = append(fields, field{"type", `"stdio"`})
	}
	fields = append(fields,
		field{"command", jsonString(f.opts.Command)},
		field{"args", indentJSON([]string{"proxy", "--url", url}, inner, f.unit)})
	if hv := member(e, "headers"); hv != nil {
		ho, ok := hv.Value.(*hujson.Object)
		if !ok {
			return false, Skipped, "its headers are not an object of strings", nil
		}
		var names, values []string
		for _, hm := range ho.Members {
			v, ok := str(&hm.Value)
			if !ok {
				return false, Skipped, "its headers are not an object of strings", nil
			}
			names, values = append(names, name(hm)), append(values, v)
		}
		fields = append(fields, field{"env", indentJSON(map[string]string{HeadersEnv: headerLines(names, values)}, inner, f.unit)})
	}
	for _, em := range e.Members {
		switch k := name(em); k {
		case "type", "url", "serverUrl", "httpUrl", "headers", "command", "args", "env", OriginalKey:
		default:
			fields = append(fields, field{k, string(hujson.Value{Value: em.Value.Value}.Pack())})
		}
	}
	orig := hujson.Value{Value: e}.Pack()
	fields = append(fields, field{OriginalKey, strings.ReplaceAll(string(orig), "\n", "\n"+f.unit)})
	var b strings.Builder
	b.WriteString("{")
	for i, fl := range fields {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n" + inner + jsonString(fl.key) + ": " + fl.val)
	}
	b.WriteString("\n" + ind + "}")
	v, err := hujson.Parse([]byte(b.String()))
	if err != nil {
		return false, "", "", fmt.Errorf("internal error: the wrapped entry does not parse: %v", err)
	}
	m.Value.Value = v.Value
	return true, Wrapped, "", nil
}

// unwrapEntry rewrites one wrapped server entry in place as it was.
func (f *jsonFile) unwrapEntry(m *hujson.ObjectMember, e *hujson.Object) (did bool, action, reason string, err error) {
	cmdObj, cmdKey := commandObject(e)
	cmd, _ := str(member(cmdObj, cmdKey))
	argsV := member(cmdObj, "args")
	args, ok := stringsOf(argsV)
	if (!namesScrollback(cmd) && cmd != f.opts.Command) || !ok || len(args) == 0 || args[0] != "proxy" {
		return false, NotWrapped, "", nil
	}
	if ov := member(e, OriginalKey); ov != nil {
		o, ok := ov.Value.(*hujson.Object)
		if !ok {
			return false, Skipped, "its " + OriginalKey + " is not an object", nil
		}
		text := string(hujson.Value{Value: o}.Pack())
		if lines := strings.Split(text, "\n"); len(lines) > 1 && allHavePrefix(lines[1:], f.unit) {
			text = strings.ReplaceAll(text, "\n"+f.unit, "\n")
		}
		v, err := hujson.Parse([]byte(text))
		if err != nil {
			return false, "", "", fmt.Errorf("internal error: the original entry does not parse: %v", err)
		}
		m.Value.Value = v.Value
		return true, Unwrapped, "", nil
	}
	up, rest, sep, ok := proxyArgs(args)
	if !ok {
		return false, Skipped, "its proxy command has no upstream command after --", nil
	}
	member(cmdObj, cmdKey).Value = hujson.String(up)
	arr := argsV.Value.(*hujson.Array)
	if len(rest) == 0 {
		removeMember(cmdObj, "args")
	} else {
		first := arr.Elements[0].BeforeExtra
		arr.Elements = arr.Elements[sep+2:]
		arr.Elements[0].BeforeExtra = first
	}
	return true, Unwrapped, "", nil
}

// commandObject is the object holding a server's command and args, and the
// command's key: the entry itself ("command"), or Zed's older
// "command": {"path", "args", "env"} ("path").
func commandObject(e *hujson.Object) (*hujson.Object, string) {
	if v := member(e, "command"); v != nil {
		if o, ok := v.Value.(*hujson.Object); ok {
			return o, "path"
		}
	}
	return e, "command"
}

// prependArgs puts prefix before the args of o, in the style of the list
// that is there (one line, or one element a line), or adds "args" after
// the member cmdKey.
func prependArgs(o *hujson.Object, cmdKey string, prefix []string) {
	if v := member(o, "args"); v != nil {
		arr := v.Value.(*hujson.Array)
		els := arr.Elements
		var first, sep hujson.Extra
		if len(els) > 0 {
			first = els[0].BeforeExtra
		}
		switch {
		case len(els) >= 2 && isSpace(els[1].BeforeExtra):
			sep = els[1].BeforeExtra
		case bytes.ContainsRune(first, '\n') && isSpace(first):
			sep = first
		default:
			sep = hujson.Extra(" ")
		}
		var out []hujson.Value
		for i, s := range prefix {
			ex := sep
			if i == 0 {
				ex = first
			}
			out = append(out, hujson.Value{BeforeExtra: clone(ex), Value: hujson.String(s)})
		}
		if len(els) > 0 {
			els[0].BeforeExtra = clone(sep)
		}
		arr.Elements = append(out, els...)
		return
	}
	i := index(o, cmdKey)
	elems := make([]hujson.Value, len(prefix))
	for j, s := range prefix {
		elems[j].Value = hujson.String(s)
		if j > 0 {
			elems[j].BeforeExtra = hujson.Extra(" ")
		}
	}
	ref := &o.Members[i]
	nm := hujson.ObjectMember{
		Name:  hujson.Value{BeforeExtra: memberSep(o, i), Value: hujson.String("args"), AfterExtra: clone(ref.Name.AfterExtra)},
		Value: hujson.Value{BeforeExtra: clone(ref.Value.BeforeExtra), Value: &hujson.Array{Elements: elems}},
	}
	if i == len(o.Members)-1 {
		// The last member carries the trailing comma, if there is one.
		nm.Value.AfterExtra, ref.Value.AfterExtra = ref.Value.AfterExtra, nil
	}
	o.Members = slices.Insert(o.Members, i+1, nm)
}

// memberSep is the whitespace to put before a member inserted after
// member i: what separates the members there already.
func memberSep(o *hujson.Object, i int) hujson.Extra {
	switch {
	case i+1 < len(o.Members) && isSpace(o.Members[i+1].Name.BeforeExtra):
		return clone(o.Members[i+1].Name.BeforeExtra)
	case i > 0 && isSpace(o.Members[i].Name.BeforeExtra):
		return clone(o.Members[i].Name.BeforeExtra)
	case bytes.ContainsRune(o.Members[i].Name.BeforeExtra, '\n'):
		ex := o.Members[i].Name.BeforeExtra
		return clone(ex[bytes.LastIndexByte(ex, '\n'):])
	}
	return hujson.Extra(" ")
}

func removeMember(o *hujson.Object, key string) {
	i := index(o, key)
	if i < 0 {
		return
	}
	if i == len(o.Members)-1 && i > 0 {
		o.Members[i-1].Value.AfterExtra = o.Members[i].Value.AfterExtra
	}
	o.Members = slices.Delete(o.Members, i, i+1)
}

// index is the position of the member named key in o, the last one when
// the key is repeated (as JSON.parse and encoding/json read it), or -1.
func index(o *hujson.Object, key string) int {
	for i := len(o.Members) - 1; i >= 0; i-- {
		if name(o.Members[i]) == key {
			return i
		}
	}
	return -1
}

func member(o *hujson.Object, key string) *hujson.Value {
	if i := index(o, key); i >= 0 {
		return &o.Members[i].Value
	}
	return nil
}

func name(m hujson.ObjectMember) string {
	lit, _ := m.Name.Value.(hujson.Literal)
	return lit.String()
}

func str(v *hujson.Value) (string, bool) {
	if v == nil {
		return "", false
	}
	lit, ok := v.Value.(hujson.Literal)
	if !ok || lit.Kind() != '"' {
		return "", false
	}
	return lit.String(), true
}

// stringsOf is a list of strings; a missing list (nil) is an empty one.
func stringsOf(v *hujson.Value) ([]string, bool) {
	if v == nil {
		return nil, true
	}
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(arr.Elements))
	for i := range arr.Elements {
		s, ok := str(&arr.Elements[i])
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func isSpace(ex hujson.Extra) bool { return len(bytes.TrimSpace(ex)) == 0 }

// clone copies an Extra, which may alias the input file's bytes.
func clone(ex hujson.Extra) hujson.Extra {
	if ex == nil {
		return nil
	}
	return append(hujson.Extra{}, ex...)
}

func allHavePrefix(lines []string, prefix string) bool {
	for _, l := range lines {
		if !strings.HasPrefix(l, prefix) {
			return false
		}
	}
	return true
}

// indentJSON is v as indented JSON whose lines after the first start with
// prefix.
func indentJSON(v any, prefix, unit string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, unit)
	enc.Encode(v) // strings and maps of strings always encode
	return strings.TrimSuffix(b.String(), "\n")
}

// indentOf guesses the file's indentation unit from its first indented
// line.
func indentOf(b []byte) string {
	for _, line := range bytes.Split(b, []byte("\n"))[1:] {
		t := bytes.TrimLeft(line, " \t")
		if n := len(line) - len(t); n > 0 && len(t) > 0 {
			return string(line[:n])
		}
	}
	return "  "
}

// lineIndent is the leading whitespace of the line holding offset off.
func lineIndent(b []byte, off int) string {
	start := bytes.LastIndexByte(b[:off], '\n') + 1
	end := start
	for end < len(b) && (b[end] == ' ' || b[end] == '\t') {
		end++
	}
	return string(b[start:end])
}

// hujsonPos reads the place out of hujson's error; compiled on first use,
// not at start-up, which every scrollback process would pay for.
var hujsonPos = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^hujson: line (\d+), column (\d+): (.*)$`)
})

// jsonSyntaxError turns hujson's error into an *Error with its place.
func jsonSyntaxError(b []byte, err error) error {
	if m := hujsonPos().FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		return &Error{Line: line, Column: col, Msg: "not valid JSON (comments and trailing commas are fine): " + m[3]}
	}
	return errorAt(b, 0, "not valid JSON: %v", err)
}

func decodeJSON(b []byte) (any, error) {
	std, err := hujson.Standardize(bytes.Clone(b))
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(std))
	dec.UseNumber()
	var v any
	err = dec.Decode(&v)
	return v, err
}

func kindName(k hujson.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 'f', 't':
		return "a boolean"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case '[':
		return "an array"
	}
	return "an object"
}
