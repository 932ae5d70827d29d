package eval

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
)

//go:embed scenarios/*.json
var scenarioFiles embed.FS

// A Scenario is one question a model must answer from output it cannot see
// at once. It is read from a JSON file under scenarios/.
type Scenario struct {
	// Name is the scenario's short name, used by --scenario.
	Name string `json:"name"`
	// Title says in one line what the scenario checks.
	Title string `json:"title"`
	// About explains the scenario for docs/eval.md and the report.
	About string `json:"about,omitempty"`
	// Client is the kind of client the model works in: ClientAgent (a
	// shell and read_file in every mode, the default) or ClientChat (only
	// the upstream MCP tools, plus scrollback's readers in scrollback mode).
	Client Client `json:"client,omitempty"`
	// Sealed marks a scenario whose output exists only once: it comes from
	// a sealed output the harness serves once (Setup.Outputs) or from an
	// upstream MCP tool, never from a file the model could read again.
	Sealed bool `json:"sealed,omitempty"`
	// Setup makes the scenario's files, outputs, scripts, upstream tools
	// and foreign copies.
	Setup Setup `json:"setup"`
	// Question is the user's message. {{dir}} is replaced by the run's
	// working directory, {{api}} by the base URL of the harness's one-shot
	// HTTP server, {{foreign_id}} by the id of a copy made in another
	// session (Setup.Foreign).
	Question string `json:"question"`
	// Truth is what the right answer is: TruthValue (a value Answer
	// recognizes, the default) or TruthAbsent (that the thing asked for is
	// not there; Answer recognizes a claim of absence).
	Truth Truth `json:"truth,omitempty"`
	// Answer recognizes the true answer.
	Answer Checker `json:"answer"`
	// Uncertain recognizes an answer that says it cannot tell; "" = the
	// suite's default pattern (DefaultUncertain).
	Uncertain string `json:"uncertain,omitempty"`
	// Source names the scenario's sources: scripts and upstream tools. A
	// script that prints files counts a re-run when it runs again with the
	// same arguments; a sealed output or an upstream result counts one
	// whenever it is served again.
	Source []string `json:"source,omitempty"`
	// PastCut marks scenarios whose evidence lies past what the truncate
	// baseline shows (a 24 KiB head, no id, no reader).
	PastCut bool `json:"past_cut,omitempty"`
	// Lost lists the modes in which the evidence cannot be had without
	// running a source again: there, and only there, an answer that says
	// it cannot tell is uncertain rather than wrong.
	Lost []Mode `json:"lost,omitempty"`
	// Policy holds hints for the scripted models of package evaltest: the
	// target to look for, never the answer.
	Policy Policy `json:"policy"`

	uncertain *regexp.Regexp
}

// Client is the kind of client a scenario's model works in.
type Client string

// The clients.
const (
	// ClientAgent has a shell (run_command) and read_file in every mode,
	// as a coding agent does.
	ClientAgent Client = "agent"
	// ClientChat has only the upstream MCP tools (behind scrollback proxy
	// in scrollback mode, with its readers), as a chat client with a
	// proxied MCP server does: no shell, no files.
	ClientChat Client = "chat"
)

// Truth is the kind of a scenario's right answer.
type Truth string

// The truths.
const (
	// TruthValue: the right answer states a value.
	TruthValue Truth = "value"
	// TruthAbsent: the right answer is that the thing asked for is not
	// there, which is right only after a full copy was searched.
	TruthAbsent Truth = "absent"
)

// DefaultUncertain recognizes an answer that says it cannot tell.
const DefaultUncertain = `uncertain|not (sure|certain)|cannot (tell|be sure|say|determine|confirm|know|see|read|access|recover|find out)|can ?not (tell|determine|read|access)|can't (tell|be sure|say|determine|confirm|know|see|read|access|recover)|unable to (tell|determine|read|access|see|recover|confirm)|no way to (tell|know|read|see)|not (retained|kept|available|recoverable|shown|visible|accessible|captured)|(was|were|is|are|got) (dropped|lost|cut off|omitted|truncated)|unknown`

// Setup is what a scenario makes before the model is asked.
type Setup struct {
	// Files are generated into the run's working directory, where the
	// model can read them.
	Files []FileSpec `json:"files,omitempty"`
	// Outputs are generated where the model cannot read them and served
	// once each by the harness's local HTTP server: {{fetch NAME}} in a
	// script's body fetches output NAME, {{api}}/NAME is its URL. A second
	// fetch answers 410 Gone and counts as a re-run.
	Outputs []FileSpec `json:"outputs,omitempty"`
	// Scripts become executable shell scripts ./NAME in the working
	// directory. Each records its arguments in a run log before running
	// Body, so that re-runs are counted by the command itself.
	Scripts []Script `json:"scripts,omitempty"`
	// Foreign, when set, is a command run through run_command in another
	// session of the same database before the model starts; its output id
	// replaces {{foreign_id}} in the question.
	Foreign string `json:"foreign,omitempty"`
	// Upstream, when set, is an MCP server the harness runs: behind
	// scrollback proxy in scrollback mode, behind the baseline's own cut or
	// spill in the others.
	Upstream *UpstreamSpec `json:"upstream,omitempty"`
	// CodeMode, when true, documents that the scenario uses run_code
	// (Code Mode), which scrollback offers always.
	CodeMode bool `json:"code_mode,omitempty"`
}

// FileSpec is one generated file or output: Gen names a generator (see
// generate.go) and Args its parameters.
type FileSpec struct {
	Path string          `json:"path,omitempty"` // a file's path in the working directory
	Name string          `json:"name,omitempty"` // an output's name
	Gen  string          `json:"gen"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Script is one counting shell script.
type Script struct {
	Name string `json:"name"`
	Body string `json:"body"`
}

// fetchRE finds {{fetch NAME}} in a script's body.
var fetchRE = regexp.MustCompile(`\{\{fetch ([a-z0-9][a-z0-9-]*)\}\}`)

// sealed reports whether the script prints sealed outputs, which the
// harness counts, rather than files.
func (s Script) sealed() bool { return fetchRE.MatchString(s.Body) }

// UpstreamSpec is an MCP server of tools whose results are sealed outputs.
type UpstreamSpec struct {
	// Name is the server's name, as the client sees it.
	Name  string         `json:"name,omitempty"`
	Tools []UpstreamTool `json:"tools"`
}

// UpstreamTool is one tool of an upstream server. Each call answers with
// the output its Key argument selects; serving an output a second time
// counts as a re-run.
type UpstreamTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Params are the tool's arguments: name → "type: what it is", type one
	// of string, integer, boolean. Every one is optional.
	Params map[string]string `json:"params,omitempty"`
	// Key is the argument that selects the output ("" = none).
	Key string `json:"key,omitempty"`
	// Outputs maps the Key argument's value (trimmed; "" when it is not
	// given) to the output served; "*" matches any value. A value that
	// matches nothing is a tool error naming the values there are.
	Outputs map[string]string `json:"outputs"`
	// Fetch, when true, makes the tool fetch a URL (its "url" argument)
	// with an HTTP GET and return the body, as an MCP fetch server does.
	Fetch bool `json:"fetch,omitempty"`
}

// Policy is what a scripted model may know of a scenario: how to start,
// what to look for, and how to phrase what it found. It never holds the
// answer.
type Policy struct {
	// Start are the tool calls made first, in order. Strings in Args may
	// use {{dir}}, {{api}} and {{foreign_id}}.
	Start []Call `json:"start"`
	// Find is a regular expression for the target in tool output; its first
	// group (or the whole match) is the finding.
	Find string `json:"find"`
	// Grep is the pattern that finds the target: RE2 for
	// grep_tool_output, and, with \d read as [0-9], an extended regular
	// expression for grep -o in a shell, which shows the match and what
	// follows it: Find must match within that. "" = Find.
	Grep string `json:"grep,omitempty"`
	// Next follows the source's own pagination: when its Find matches a
	// tool result, Call is made with {{1}} replaced by the first group.
	Next *Next `json:"next,omitempty"`
	// Query is a jq filter that finds the target in a JSON copy, for
	// query_tool_output ("" = none).
	Query string `json:"query,omitempty"`
	// Count, when true, makes the finding the number of lines that Grep
	// matches, instead of Find's first group.
	Count bool `json:"count,omitempty"`
	// Say phrases the final answer from a finding: {{1}} is the finding.
	// "" = "The answer is {{1}}."
	Say string `json:"say,omitempty"`
}

// Call is one tool call of a policy.
type Call struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

// Next is a pagination rule of a policy.
type Next struct {
	Find string `json:"find"`
	Call Call   `json:"call"`
}

// Scenarios returns the embedded scenario suite, in file order.
func Scenarios() ([]*Scenario, error) {
	return loadScenarios(scenarioFiles, "scenarios")
}

func loadScenarios(fsys fs.FS, dir string) ([]*Scenario, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []*Scenario
	seen := map[string]string{}
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		sc, err := ParseScenario(data)
		if err != nil {
			return nil, fmt.Errorf("eval: scenario file %s: %w", name, err)
		}
		if other, ok := seen[sc.Name]; ok {
			return nil, fmt.Errorf("eval: scenario name %q is used by %s and %s", sc.Name, other, name)
		}
		seen[sc.Name] = name
		out = append(out, sc)
	}
	return out, nil
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// ParseScenario reads one scenario file and checks that it is usable: a
// name, a question, a checker that compiles, generators that exist,
// sources that are defined, and a policy whose patterns compile.
func ParseScenario(data []byte) (*Scenario, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var sc Scenario
	if err := dec.Decode(&sc); err != nil {
		return nil, fmt.Errorf("not a scenario: %w", err)
	}
	if err := sc.check(); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	return &sc, nil
}

func (sc *Scenario) check() error {
	if !nameRE.MatchString(sc.Name) {
		return fmt.Errorf("name %q: want lower-case letters, digits and dashes", sc.Name)
	}
	if strings.TrimSpace(sc.Question) == "" || sc.Title == "" {
		return fmt.Errorf("a title and a question are needed")
	}
	switch sc.Client {
	case "":
		sc.Client = ClientAgent
	case ClientAgent, ClientChat:
	default:
		return fmt.Errorf("client %q: want agent or chat", sc.Client)
	}
	switch sc.Truth {
	case "":
		sc.Truth = TruthValue
	case TruthValue, TruthAbsent:
	default:
		return fmt.Errorf("truth %q: want value or absent", sc.Truth)
	}
	if err := sc.Answer.compile(); err != nil {
		return fmt.Errorf("answer: %w", err)
	}
	unc := sc.Uncertain
	if unc == "" {
		unc = DefaultUncertain
	}
	var err error
	if sc.uncertain, err = regexp.Compile("(?is)" + unc); err != nil {
		return fmt.Errorf("uncertain: %w", err)
	}
	for _, m := range sc.Lost {
		if !slices.Contains(AllModes, m) {
			return fmt.Errorf("lost: no mode %q (the modes are %s)", m, modeList(AllModes))
		}
	}
	for _, f := range sc.Setup.Files {
		if _, ok := generators[f.Gen]; !ok {
			return fmt.Errorf("file %s: no generator %q (there are %s)", f.Path, f.Gen, strings.Join(generatorNames(), ", "))
		}
		if f.Path == "" || path.IsAbs(f.Path) || strings.Contains(f.Path, "..") {
			return fmt.Errorf("file path %q: want a relative path inside the working directory", f.Path)
		}
	}
	outputs := map[string]bool{}
	for _, o := range sc.Setup.Outputs {
		if _, ok := generators[o.Gen]; !ok {
			return fmt.Errorf("output %s: no generator %q (there are %s)", o.Name, o.Gen, strings.Join(generatorNames(), ", "))
		}
		if !nameRE.MatchString(o.Name) || outputs[o.Name] {
			return fmt.Errorf("output name %q: want a new name of lower-case letters, digits and dashes", o.Name)
		}
		outputs[o.Name] = true
	}
	for _, s := range sc.Setup.Scripts {
		if !nameRE.MatchString(s.Name) {
			return fmt.Errorf("script name %q: want lower-case letters, digits and dashes", s.Name)
		}
		for _, m := range fetchRE.FindAllStringSubmatch(s.Body, -1) {
			if !outputs[m[1]] {
				return fmt.Errorf("script %s fetches %q, which is not an output", s.Name, m[1])
			}
		}
	}
	tools := map[string]bool{}
	if up := sc.Setup.Upstream; up != nil {
		for _, t := range up.Tools {
			if !nameRE.MatchString(strings.ReplaceAll(t.Name, "_", "-")) || len(t.Outputs) == 0 && !t.Fetch {
				return fmt.Errorf("upstream tool %q: want a name of lower-case letters, digits and underscores, and outputs", t.Name)
			}
			for _, o := range t.Outputs {
				if !outputs[o] {
					return fmt.Errorf("upstream tool %s serves %q, which is not an output", t.Name, o)
				}
			}
			for p, d := range t.Params {
				typ, _, _ := strings.Cut(d, ":")
				if !slices.Contains([]string{"string", "integer", "boolean"}, typ) {
					return fmt.Errorf("upstream tool %s: param %s: type %q: want string, integer or boolean", t.Name, p, typ)
				}
			}
			tools[t.Name] = true
		}
	}
	for _, src := range sc.Source {
		ok := slices.ContainsFunc(sc.Setup.Scripts, func(s Script) bool { return s.Name == src })
		if !ok && !tools[src] {
			return fmt.Errorf("source %q is neither a script nor an upstream tool", src)
		}
	}
	if sc.Client == ClientChat && len(tools) == 0 {
		return fmt.Errorf("a chat scenario needs upstream tools: a chat client has no shell")
	}
	if sc.Sealed {
		for _, s := range sc.Setup.Scripts {
			if slices.Contains(sc.Source, s.Name) && !s.sealed() {
				return fmt.Errorf("sealed, but source %s prints files the model can read again", s.Name)
			}
		}
	}
	for _, p := range []string{sc.Policy.Find, sc.Policy.Grep} {
		if _, err := regexp.Compile(p); err != nil {
			return fmt.Errorf("policy pattern %q: %w", p, err)
		}
	}
	if sc.Policy.Find == "" || len(sc.Policy.Start) == 0 {
		return fmt.Errorf("the policy needs start calls and a find pattern")
	}
	if sc.Policy.Next != nil {
		if _, err := regexp.Compile(sc.Policy.Next.Find); err != nil {
			return fmt.Errorf("policy next pattern: %w", err)
		}
	}
	return nil
}

// LostIn reports whether the scenario's evidence cannot be had in mode
// without running a source again.
func (sc *Scenario) LostIn(m Mode) bool { return slices.Contains(sc.Lost, m) }

// Select returns the scenarios named, in suite order; no names = all. An
// unknown name is an error listing the names there are.
func Select(all []*Scenario, names []string) ([]*Scenario, error) {
	if len(names) == 0 {
		return all, nil
	}
	var out []*Scenario
	for _, sc := range all {
		if slices.Contains(names, sc.Name) {
			out = append(out, sc)
		}
	}
	for _, n := range names {
		if !slices.ContainsFunc(all, func(sc *Scenario) bool { return sc.Name == n }) {
			var have []string
			for _, sc := range all {
				have = append(have, sc.Name)
			}
			return nil, fmt.Errorf("no scenario named %q; the scenarios are %s", n, strings.Join(have, ", "))
		}
	}
	return out, nil
}
