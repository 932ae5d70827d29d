package present

import (
	"strconv"
	"strings"
)

// The tools a text can name, as MCP lists them.
const (
	RunCommandTool = "run_command"
	ReadTool       = "read_tool_output"
	ReadFileTool   = "read_file"
	GrepTool       = "grep_tool_output"
	QueryTool      = "query_tool_output"
	RunCodeTool    = "run_code"
)

// A Surface is where a text is read, which decides how it names the calls
// that continue: MCP tools (MCP, the zero value) or CLI commands (CLI).
type Surface struct {
	cli     bool
	session string // the --session the CLI's commands must repeat; "" = none
}

// MCP names MCP tools: read_tool_output {"id":"out_x","offset":4096}. It is
// the zero Surface, and the Go API's.
var MCP = Surface{}

// CLI names the CLI's commands: scrollback read --offset 4096 out_x. When
// session is not "", each command carries --session session, so that it
// reads the session the text came from.
func CLI(session string) Surface { return Surface{cli: true, session: session} }

// IsCLI reports whether s names CLI commands.
func (s Surface) IsCLI() bool { return s.cli }

// Read is the call that reads the copy id from offset.
func (s Surface) Read(id string, offset int64) string {
	if s.cli {
		return s.command("read", "--offset", itoa(offset), shellQuote(id))
	}
	return ReadTool + ` {"id":` + jsonString(id) + `,"offset":` + itoa(offset) + `}`
}

// Grep is the call that searches the copy id, the pattern left to fill in.
func (s Surface) Grep(id string) string {
	if s.cli {
		return s.command("grep", shellQuote(id), "'<RE2>'")
	}
	return GrepTool + ` {"id":` + jsonString(id) + `,"pattern":"<RE2>"}`
}

// ReadOrGrep names the two calls that read and search the copy id from
// its start: read_tool_output {...}; grep_tool_output {...}.
func (s Surface) ReadOrGrep(id string) string { return s.Read(id, 0) + "; " + s.Grep(id) }

// Query is the call that runs a jq filter over the copy id, the filter
// left to fill in.
func (s Surface) Query(id string) string {
	if s.cli {
		return s.command("query", shellQuote(id), "'.key'")
	}
	return QueryTool + ` {"id":` + jsonString(id) + `,"filter":".key"}`
}

// QueryPage is the call that continues the results of filter over the copy
// id at offset.
func (s Surface) QueryPage(id, filter string, offset int64) string {
	if s.cli {
		return s.command("query", "--offset", itoa(offset), shellQuote(id), shellQuote(filter))
	}
	return QueryTool + ` {"id":` + jsonString(id) + `,"filter":` + jsonString(filter) + `,"offset":` + itoa(offset) + `}`
}

// File is the call that reads the file at path from byte offset.
func (s Surface) File(path string, offset int64) string {
	if s.cli {
		return "scrollback file --byte-offset " + itoa(offset) + " " + shellQuote(path)
	}
	return ReadFileTool + ` {"path":` + jsonString(path) + `,"byte_offset":` + itoa(offset) + `}`
}

// command writes a CLI command line: scrollback NAME [--session S] ARGS.
func (s Surface) command(name string, args ...string) string {
	var b strings.Builder
	b.WriteString("scrollback ")
	b.WriteString(name)
	if s.session != "" {
		b.WriteString(" --session ")
		b.WriteString(shellQuote(s.session))
	}
	for _, a := range args {
		b.WriteByte(' ')
		b.WriteString(a)
	}
	return b.String()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// jsonString quotes s, made valid UTF-8, as a JSON string.
func jsonString(s string) string {
	const hex = "0123456789abcdef"
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xF])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// JSONString quotes s as a JSON string (invalid UTF-8 as U+FFFD), for calls
// shown to the model.
func JSONString(s string) string { return jsonString(s) }

// shellQuote quotes s for a POSIX shell when it needs it: ids and numbers
// pass as they are.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./:=@,+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
