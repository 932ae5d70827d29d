// Package evaltest serves a scripted model over the two protocols package
// eval speaks — OpenAI-compatible Chat Completions and Anthropic Messages —
// so that the evaluation harness can be tested end to end without a live
// model, and every checker can be shown to fail.
//
// A Policy decides each turn from the conversation, as a model would: it
// sees the scenario's question, the tools offered and the tool results, and
// may use the scenario's Policy hints (what to look for), never its answer.
// The Diligent policy follows footers, pages and greps, and searches a
// spilled result's file; the Lazy one answers from the preview; the Tee
// policy is the careful shell agent without scrollback; the Twice policy
// runs each source twice.
package evaltest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/scrollback-dev/scrollback/eval"
)

// Turn is what a policy sees: the scenario the question belongs to, the
// values of its placeholders, the tools and the conversation so far.
type Turn struct {
	Scenario *eval.Scenario
	Vars     map[string]string // "dir", "api", "foreign_id"
	Tools    []string
	History  []eval.Message
}

// A Policy decides the scripted model's next turn.
type Policy interface {
	Next(t Turn) eval.Reply
}

// Policies by name, for tests and the CLI's script tests.
var Policies = map[string]Policy{
	"diligent": Diligent{},
	"lazy":     Lazy{},
	"tee":      Tee{},
	"twice":    Twice{},
	"sloppy":   Sloppy{},
	"stubborn": Stubborn{},
}

// The final answers the policies give when they found nothing.
const (
	AbsentAnswer    = "It is absent: I searched the whole output and it is not there."
	UncertainAnswer = "It is uncertain: part of the output that would settle it was not retained or not shown to me, so I cannot tell."
	LazyAnswer      = "I could not find it."
)

var idRE = regexp.MustCompile(`\bout_[a-z0-9]{16,}\b`)

// exchange is one tool call and the result the model read.
type exchange struct {
	call   eval.ToolCall
	args   map[string]any
	result string
	isErr  bool
}

// isPreview reports whether the result names a retained copy without
// being a page or a search of one: a preview, not the whole result.
func (e exchange) isPreview() bool {
	return !slices.Contains(readers, e.call.Name) && !e.isErr && idRE.MatchString(e.result)
}

type state struct {
	t    Turn
	ex   []exchange
	made map[string]int // how often each call was made
}

func analyze(t Turn) *state {
	s := &state{t: t, made: map[string]int{}}
	results := map[string]eval.Message{}
	for _, m := range t.History {
		if m.Role == "tool" {
			results[m.ToolCallID] = m
		}
	}
	for _, m := range t.History {
		for _, c := range m.ToolCalls {
			var args map[string]any
			json.Unmarshal([]byte(c.Args), &args)
			r := results[c.ID]
			isErr := r.IsError || strings.HasPrefix(r.Text, "Error:") // Chat Completions carries no error flag
			s.ex = append(s.ex, exchange{call: c, args: args, result: r.Text, isErr: isErr})
			s.made[key(c.Name, args)]++
		}
	}
	return s
}

func key(name string, args map[string]any) string {
	b, _ := json.Marshal(args) // map keys marshal sorted
	return name + " " + string(b)
}

func (s *state) hasTool(name string) bool { return slices.Contains(s.t.Tools, name) }

// expand fills a policy call's placeholders; an argument that is exactly
// "{{1}}" and holds a number becomes that number.
func (s *state) expand(c eval.Call, group string) (string, map[string]any) {
	args := map[string]any{}
	for k, v := range c.Args {
		if str, ok := v.(string); ok {
			if str == "{{1}}" {
				if n, err := strconv.ParseInt(group, 10, 64); err == nil {
					args[k] = float64(n)
					continue
				}
			}
			str = strings.ReplaceAll(str, "{{1}}", group)
			for name, val := range s.t.Vars {
				str = strings.ReplaceAll(str, "{{"+name+"}}", val)
			}
			v = str
		}
		args[k] = v
	}
	return c.Tool, args
}

func call(name string, args map[string]any) eval.Reply {
	b, _ := json.Marshal(args)
	return eval.Reply{ToolCalls: []eval.ToolCall{{Name: name, Args: string(b)}}}
}

func answer(text string) eval.Reply { return eval.Reply{Text: text} }

func say(p eval.Policy, finding string) string {
	tmpl := p.Say
	if tmpl == "" {
		tmpl = "The answer is {{1}}."
	}
	return strings.ReplaceAll(tmpl, "{{1}}", finding)
}

// start returns the first start call not made yet.
func (s *state) start() (eval.Reply, bool) {
	for _, c := range s.t.Scenario.Policy.Start {
		name, args := s.expand(c, "")
		if s.made[key(name, args)] == 0 {
			return call(name, args), true
		}
	}
	return eval.Reply{}, false
}

// opening is how the policies that look begin: the start calls, then an
// answer as soon as a whole result (not a preview) shows the target, then
// the source's pages.
func (s *state) opening() (eval.Reply, bool) {
	p := s.t.Scenario.Policy
	if r, ok := s.start(); ok {
		return r, true
	}
	if !p.Count {
		if f, ok := s.find(false); ok {
			return answer(say(p, f)), true
		}
	}
	return s.next()
}

// todo returns the call if it was not made yet.
func (s *state) todo(name string, args map[string]any) (eval.Reply, bool) {
	if s.made[key(name, args)] > 0 {
		return eval.Reply{}, false
	}
	return call(name, args), true
}

// next follows the source's pagination: the first page token a result
// names whose page was not asked for yet.
func (s *state) next() (eval.Reply, bool) {
	p := s.t.Scenario.Policy
	if p.Next == nil {
		return eval.Reply{}, false
	}
	re := regexp.MustCompile(p.Next.Find)
	for _, e := range s.ex {
		for _, m := range re.FindAllStringSubmatch(e.result, -1) {
			if r, ok := s.todo(s.expand(p.Next.Call, m[len(m)-1])); ok {
				return r, true
			}
		}
	}
	return eval.Reply{}, false
}

func (s *state) pattern() string {
	if p := s.t.Scenario.Policy; p.Grep != "" {
		return p.Grep
	}
	return s.t.Scenario.Policy.Find
}

var spillRE = regexp.MustCompile(`Full output saved to: (\S+)`)

// spilled are the files spill mode saved results to, in order.
func (s *state) spilled() []string {
	var paths []string
	for _, e := range s.ex {
		for _, m := range spillRE.FindAllStringSubmatch(e.result, -1) {
			if !slices.Contains(paths, m[1]) {
				paths = append(paths, m[1])
			}
		}
	}
	return paths
}

// ere is a grep hint as an extended regular expression for grep -E.
func ere(p string) string { return strings.ReplaceAll(p, `\d`, "[0-9]") }

// shellSearch greps files with the shell: the lines that match, each with
// some context, or, for a count, the number of lines.
func (s *state) shellSearch(files ...string) (eval.Reply, bool) {
	if !s.hasTool("run_command") || len(files) == 0 {
		return eval.Reply{}, false
	}
	var q []string
	for _, f := range files {
		q = append(q, shellQuote(f))
	}
	// The match and what follows it, so that a line of megabytes shows
	// only its match; in the C locale, as grep is fast there.
	cmd := "LC_ALL=C grep -n -o -E " + shellQuote("("+ere(s.pattern())+").{0,300}") + " " + strings.Join(q, " ") + " | head -n 200"
	if s.t.Scenario.Policy.Count {
		cmd = "cat " + strings.Join(q, " ") + " | grep -c -E " + shellQuote(ere(s.pattern()))
	}
	return s.todo("run_command", map[string]any{"command": cmd})
}

func shellQuote(v string) string { return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'" }

var countRE = regexp.MustCompile(`^\s*(\d+)\s*$`)

// shellCount is the count a shell search gave.
func (s *state) shellCount() (int, bool) {
	for _, e := range slices.Backward(s.ex) {
		cmd, _ := e.args["command"].(string)
		if e.call.Name == "run_command" && strings.Contains(cmd, "grep -c") {
			if m := countRE.FindStringSubmatch(strings.SplitN(e.result, "\n", 2)[0]); m != nil {
				n, _ := strconv.Atoi(m[1])
				return n, true
			}
		}
	}
	return 0, false
}

// find looks for the policy's target in the tool results, newest first.
// With previews false it skips previews: a preview is not the whole result,
// so a finding there may not be the one asked for (the first error of a
// build, say).
func (s *state) find(previews bool) (string, bool) {
	re := regexp.MustCompile(s.t.Scenario.Policy.Find)
	for _, e := range slices.Backward(s.ex) {
		if !previews && e.isPreview() {
			continue
		}
		if m := re.FindStringSubmatch(e.result); m != nil {
			if len(m) > 1 {
				return m[1], true
			}
			return m[0], true
		}
	}
	return "", false
}

// Diligent follows what the tools say: it makes the scenario's start
// calls, follows the source's pagination, greps every retained copy it was
// given an id for and every file a result was spilled to, reads the page of
// a match whose line was cut, and only then answers: with the finding, or
// that the target is absent (when everything it saw was whole and
// searched) or uncertain.
type Diligent struct{}

// Next implements Policy.
func (Diligent) Next(t Turn) eval.Reply {
	s := analyze(t)
	p := t.Scenario.Policy
	if r, ok := s.opening(); ok {
		return r
	}
	if p.Query != "" && s.hasTool("query_tool_output") {
		for _, id := range s.ids() {
			if r, ok := s.todo("query_tool_output", map[string]any{"id": id, "filter": p.Query}); ok {
				return r
			}
		}
		if f, ok := s.find(false); ok {
			return answer(say(p, f))
		}
	}
	if s.hasTool("grep_tool_output") {
		for _, id := range s.ids() {
			args := map[string]any{"id": id, "pattern": s.pattern()}
			if p.Count {
				args["max"] = float64(1000)
			}
			if r, ok := s.todo("grep_tool_output", args); ok {
				return r
			}
		}
		// Searches that say more may follow go on from where they stopped.
		for _, e := range s.ex {
			if e.call.Name != "grep_tool_output" || e.isErr {
				continue
			}
			if m := moreRE.FindStringSubmatch(e.result); m != nil {
				args := map[string]any{}
				for k, v := range e.args {
					args[k] = v
				}
				off, _ := strconv.ParseFloat(m[1], 64)
				args["offset"] = off
				if r, ok := s.todo("grep_tool_output", args); ok {
					return r
				}
			}
		}
	}
	if r, ok := s.shellSearch(s.spilled()...); ok {
		return r
	}
	if p.Count {
		if n, ok := s.count(); ok {
			return answer(say(p, strconv.Itoa(n)))
		}
		if n, ok := s.shellCount(); ok {
			return answer(say(p, strconv.Itoa(n)))
		}
	} else if s.hasTool("read_tool_output") {
		// A match whose line was cut: read the page where it starts.
		for _, e := range s.ex {
			if e.call.Name != "grep_tool_output" || e.isErr {
				continue
			}
			id, _ := e.args["id"].(string)
			for _, m := range matchRE.FindAllStringSubmatch(e.result, -1) {
				off, _ := strconv.ParseFloat(m[2], 64)
				if r, ok := s.todo("read_tool_output", map[string]any{"id": id, "offset": off, "limit": float64(4096)}); ok {
					return r
				}
			}
		}
	}
	return s.conclude()
}

// conclude answers with what was found: a finding only a preview showed is
// all there is; with none, uncertain when what was seen leaves room for
// the target, else absent.
func (s *state) conclude() eval.Reply {
	p := s.t.Scenario.Policy
	if f, ok := s.find(true); ok && !p.Count {
		return answer(say(p, f))
	}
	if s.uncertain() {
		return answer(UncertainAnswer)
	}
	return answer(AbsentAnswer)
}

var (
	// matchRE is a match line of grep_tool_output's text: LINE:OFFSET: text.
	matchRE = regexp.MustCompile(`(?m)^(\d+):(\d+): (.*)$`)
	moreRE  = regexp.MustCompile(`More may follow: call grep_tool_output with the same pattern and "offset": (\d+)`)
)

// ids are the output ids the tool results named, in order.
func (s *state) ids() []string {
	var ids []string
	for _, e := range s.ex {
		if e.isErr {
			continue
		}
		for _, id := range idRE.FindAllString(e.result, -1) {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// count is the most match lines any one copy's searches found.
func (s *state) count() (int, bool) {
	per := map[string]int{}
	for _, e := range s.ex {
		if e.call.Name == "grep_tool_output" && !e.isErr {
			id, _ := e.args["id"].(string)
			per[id] += len(matchRE.FindAllString(e.result, -1))
		}
	}
	best, ok := 0, false
	for _, n := range per {
		best, ok = max(best, n), true
	}
	return best, ok
}

// uncertain reports whether what the model saw leaves room for the target:
// an output cut without a copy, a copy that says it is incomplete, a tool
// that is not there, or a command that cut its own output (| head).
func (s *state) uncertain() bool {
	for _, e := range s.ex {
		if e.isErr {
			return true
		}
		if cmd, _ := e.args["command"].(string); strings.Contains(cmd, "| head") && !strings.Contains(cmd, "grep -n -o") {
			return true
		}
		for _, w := range []string{"[output truncated]", "incomplete", "complete=false", `"complete":false`} {
			if strings.Contains(e.result, w) {
				return true
			}
		}
	}
	return false
}

// readers are the tools that read or search a retained copy.
var readers = []string{"read_tool_output", "grep_tool_output", "query_tool_output"}

// Lazy runs what the question asks to run and answers from the first
// screen it got: it never calls a reader, reads files from their start
// only, follows no page and searches nothing. When the preview does not
// show the target, it says it could not find it.
type Lazy struct{}

// Next implements Policy.
func (Lazy) Next(t Turn) eval.Reply {
	s := analyze(t)
	p := t.Scenario.Policy
	for _, c := range p.Start {
		name, args := s.expand(c, "")
		if slices.Contains(readers, name) {
			continue
		}
		if name == "read_file" {
			args = map[string]any{"path": args["path"]}
		}
		if r, ok := s.todo(name, args); ok {
			return r
		}
	}
	if p.Count {
		re := regexp.MustCompile(s.pattern())
		n := 0
		for _, e := range s.ex {
			for _, line := range strings.Split(e.result, "\n") {
				if re.MatchString(line) {
					n++
				}
			}
		}
		return answer(say(p, strconv.Itoa(n)))
	}
	if f, ok := s.find(true); ok {
		return answer(say(p, f))
	}
	return answer(LazyAnswer)
}

// Tee is the careful shell agent without scrollback. It runs each source
// as asked, once; when what it saw was cut, it saves that output to a file
// without running the source again, the only way a shell can: it reads the
// script, copies the files the script prints into its own file, and greps
// that; a result spilled to a file it greps there. Where the output exists
// nowhere else (a sealed source: an API, a build, an MCP tool) it cannot,
// and says it cannot tell. It never calls scrollback's readers.
type Tee struct{}

var catRE = regexp.MustCompile(`(?m)(?:^|[;&|]\s*|\)\s*)cat ([^\s;|&]+)`)

// Next implements Policy.
func (Tee) Next(t Turn) eval.Reply {
	s := analyze(t)
	p := t.Scenario.Policy
	if r, ok := s.opening(); ok {
		return r
	}
	if r, ok := s.shellSearch(s.spilled()...); ok {
		return r
	}
	dir := t.Vars["dir"]
	if s.hasTool("run_command") && s.cut() {
		// A file the question named that read_file could not show whole:
		// grep it.
		var named []string
		for _, c := range p.Start {
			if _, args := s.expand(c, ""); c.Tool == "read_file" {
				if path, _ := args["path"].(string); path != "" && !slices.Contains(named, path) {
					named = append(named, path)
				}
			}
		}
		if r, ok := s.shellSearch(named...); ok {
			return r
		}
		for _, name := range t.Scenario.Source {
			if !slices.ContainsFunc(t.Scenario.Setup.Scripts, func(sc eval.Script) bool { return sc.Name == name }) {
				continue
			}
			script := dir + "/" + name
			if r, ok := s.todo("run_command", map[string]any{"command": "cat " + shellQuote(script)}); ok {
				return r
			}
			var files []string
			for _, e := range s.ex {
				if cmd, _ := e.args["command"].(string); cmd == "cat "+shellQuote(script) {
					for _, m := range catRE.FindAllStringSubmatch(e.result, -1) {
						if f := strings.Trim(m[1], `'"`); !strings.HasPrefix(f, "/") && !strings.Contains(f, "$") {
							files = append(files, dir+"/"+f)
						}
					}
				}
			}
			if len(files) == 0 {
				continue
			}
			saved := dir + "/.saved-" + name + ".txt"
			var q []string
			for _, f := range files {
				q = append(q, shellQuote(f))
			}
			if r, ok := s.todo("run_command", map[string]any{"command": "cat " + strings.Join(q, " ") + " > " + shellQuote(saved)}); ok {
				return r
			}
			if r, ok := s.shellSearch(saved); ok {
				return r
			}
		}
	}
	if p.Count {
		if n, ok := s.shellCount(); ok {
			return answer(say(p, strconv.Itoa(n)))
		}
	}
	return s.concludeShell()
}

// cut reports whether something the policy asked for was not seen whole:
// a result cut or spilled, or a call that failed.
func (s *state) cut() bool {
	for _, e := range s.ex {
		if e.isErr || strings.Contains(e.result, "[output truncated") || strings.Contains(e.result, "[line cut") || spillRE.MatchString(e.result) || idRE.MatchString(e.result) {
			return true
		}
	}
	return false
}

// concludeShell is conclude for a shell agent: what it searched in files
// is whole; a cut it could not get past leaves it uncertain.
func (s *state) concludeShell() eval.Reply {
	p := s.t.Scenario.Policy
	if f, ok := s.find(true); ok && !p.Count {
		return answer(say(p, f))
	}
	searched := false
	for _, e := range s.ex {
		if cmd, _ := e.args["command"].(string); e.call.Name == "run_command" && !e.isErr && strings.Contains(cmd, "grep -n -o -E") {
			searched = true
		}
	}
	if !searched && s.cut() || s.uncertain() && !searched {
		return answer(UncertainAnswer)
	}
	return answer(AbsentAnswer)
}

// Twice is Diligent, but it runs each source twice: every call of a start
// that runs something (a command, a script, an upstream tool) it makes
// again at once. Every scenario must then count a re-run.
type Twice struct{}

// Next implements Policy.
func (Twice) Next(t Turn) eval.Reply {
	s := analyze(t)
	for _, c := range t.Scenario.Policy.Start {
		name, args := s.expand(c, "")
		if slices.Contains(readers, name) || name == "read_file" {
			continue
		}
		if s.made[key(name, args)] == 1 {
			return call(name, args)
		}
	}
	return Diligent{}.Next(t)
}

// Sloppy sends its first tool call with arguments that are not JSON, then
// behaves as Diligent: the harness must return the mistake to it as a tool
// error.
type Sloppy struct{}

// BadArgs are the arguments Sloppy sends first.
const BadArgs = `{"command": "ls", oops`

// Next implements Policy.
func (Sloppy) Next(t Turn) eval.Reply {
	for _, m := range t.History {
		if len(m.ToolCalls) > 0 {
			return Diligent{}.Next(t)
		}
	}
	r := Diligent{}.Next(t)
	if len(r.ToolCalls) > 0 {
		r.ToolCalls[0].Args = BadArgs
	}
	return r
}

// Stubborn never answers: it runs `true` on every turn, until the harness's
// turn limit ends the run.
type Stubborn struct{}

// Next implements Policy.
func (Stubborn) Next(t Turn) eval.Reply {
	return call("run_command", map[string]any{"command": "true"})
}

// identify finds the scenario whose question the user asked, and the
// values its placeholders took.
func identify(scenarios []*eval.Scenario, question string) (*eval.Scenario, map[string]string, error) {
	for _, sc := range scenarios {
		re, names := questionRE(sc.Question)
		m := re.FindStringSubmatch(question)
		if m == nil {
			continue
		}
		vars := map[string]string{}
		for i, n := range names {
			vars[n] = m[i+1]
		}
		return sc, vars, nil
	}
	return nil, nil, fmt.Errorf("evaltest: no scenario asks %.80q", question)
}

var placeholderRE = regexp.MustCompile(`\\\{\\\{(dir|api|foreign_id)\\\}\\\}`)

func questionRE(q string) (*regexp.Regexp, []string) {
	var names []string
	pat := placeholderRE.ReplaceAllStringFunc(regexp.QuoteMeta(q), func(m string) string {
		name := placeholderRE.FindStringSubmatch(m)[1]
		names = append(names, name)
		switch name {
		case "foreign_id":
			return `(out_[a-z0-9]+)`
		case "api":
			return `(http://127\.0\.0\.1:\d+/[0-9a-f]+)`
		}
		return `(/[^ ` + "`" + `]+?)`
	})
	return regexp.MustCompile("^" + pat + "$"), names
}
