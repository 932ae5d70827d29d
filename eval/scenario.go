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
	// Setup makes the scenario's files, scripts and foreign copies.
	Setup Setup `json:"setup"`
	// Question is the user's message. {{dir}} is replaced by the run's
	// working directory, {{foreign_id}} by the id of a copy made in
	// another session (Setup.Foreign).
	Question string `json:"question"`
	// Answer checks the model's final answer.
	Answer Checker `json:"answer"`
	// Source names the scripts that must each run exactly once per distinct
	// invocation: running one again with the same arguments is a re-run.
	Source []string `json:"source,omitempty"`
	// Evidence, when true, fails a run whose final answer came before any
	// retained copy was read or searched (read_tool_output,
	// grep_tool_output): an absence claimed without looking.
	Evidence bool `json:"evidence,omitempty"`
	// PastCut marks scenarios whose evidence lies past what the truncate
	// baseline shows (a 24 KiB head, a 256 KiB file prefix, no reader): it
	// cannot answer them from evidence.
	PastCut bool `json:"past_cut,omitempty"`
	// PastPreview marks scenarios whose evidence is not in scrollback's own
	// preview either (neither its head nor its tail): a model answering from
	// the preview alone gets them wrong.
	PastPreview bool `json:"past_preview,omitempty"`
	// Policy holds hints for the scripted models of package evaltest: the
	// target to look for, never the answer.
	Policy Policy `json:"policy"`
}

// Setup is what a scenario makes before the model is asked.
type Setup struct {
	// Files are generated into the run's working directory.
	Files []FileSpec `json:"files,omitempty"`
	// Scripts become executable shell scripts ./NAME in the working
	// directory. Each records its arguments in a run log before running
	// Body, so that re-runs are counted by the command itself.
	Scripts []Script `json:"scripts,omitempty"`
	// Foreign, when set, is a command run through run_command in another
	// session of the same database before the model starts; its output id
	// replaces {{foreign_id}} in the question.
	Foreign string `json:"foreign,omitempty"`
	// Upstream, when set, serves an MCP tool from an in-process upstream
	// server behind the proxy (scrollback mode) or cut at 24 KiB (truncate
	// mode).
	Upstream *UpstreamSpec `json:"upstream,omitempty"`
	// CodeMode, when true, offers run_code (Code Mode) in scrollback mode
	// even where the question does not need it; scrollback offers it always,
	// so this only documents the scenario's intent.
	CodeMode bool `json:"code_mode,omitempty"`
}

// FileSpec is one generated file: Gen names a generator (see generate.go)
// and Args its parameters.
type FileSpec struct {
	Path string          `json:"path"`
	Gen  string          `json:"gen"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Script is one counting shell script.
type Script struct {
	Name string `json:"name"`
	Body string `json:"body"`
}

// UpstreamSpec is a tool of an in-process MCP server: it returns the file's
// contents as its text, and as its structuredContent when the file is a
// JSON object. Each call is counted as a run of the tool's name.
type UpstreamSpec struct {
	Tool        string `json:"tool"`
	Description string `json:"description"`
	File        string `json:"file"`
}

// Policy is what a scripted model may know of a scenario: how to start,
// what to look for, and how to phrase what it found. It never holds the
// answer.
type Policy struct {
	// Start are the tool calls made first, in order. Strings in Args may
	// use {{dir}} and {{foreign_id}}.
	Start []Call `json:"start"`
	// Find is a regular expression for the target in tool output; its first
	// group (or the whole match) is the finding.
	Find string `json:"find"`
	// Grep is the RE2 pattern given to grep_tool_output; "" = Find.
	Grep string `json:"grep,omitempty"`
	// Next follows the source's own pagination: when its Find matches a
	// tool result, Call is made with {{1}} replaced by the first group.
	Next *Next `json:"next,omitempty"`
	// Count, when true, makes the finding the number of lines of the copy
	// that Grep matches, instead of Find's first group.
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
// name, a question, a checker that compiles, generators that exist, and a
// policy whose patterns compile.
func ParseScenario(data []byte) (*Scenario, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var sc Scenario
	if err := dec.Decode(&sc); err != nil {
		return nil, fmt.Errorf("not a scenario: %w", err)
	}
	if !nameRE.MatchString(sc.Name) {
		return nil, fmt.Errorf("name %q: want lower-case letters, digits and dashes", sc.Name)
	}
	if strings.TrimSpace(sc.Question) == "" || sc.Title == "" {
		return nil, fmt.Errorf("scenario %s: a title and a question are needed", sc.Name)
	}
	if err := sc.Answer.compile(); err != nil {
		return nil, fmt.Errorf("scenario %s: answer: %w", sc.Name, err)
	}
	for _, f := range sc.Setup.Files {
		if _, ok := generators[f.Gen]; !ok {
			return nil, fmt.Errorf("scenario %s: file %s: no generator %q (there are %s)", sc.Name, f.Path, f.Gen, strings.Join(generatorNames(), ", "))
		}
		if f.Path == "" || path.IsAbs(f.Path) || strings.Contains(f.Path, "..") {
			return nil, fmt.Errorf("scenario %s: file path %q: want a relative path inside the working directory", sc.Name, f.Path)
		}
	}
	for _, s := range sc.Setup.Scripts {
		if !nameRE.MatchString(s.Name) {
			return nil, fmt.Errorf("scenario %s: script name %q: want lower-case letters, digits and dashes", sc.Name, s.Name)
		}
	}
	for _, src := range sc.Source {
		ok := slices.ContainsFunc(sc.Setup.Scripts, func(s Script) bool { return s.Name == src })
		if sc.Setup.Upstream != nil && sc.Setup.Upstream.Tool == src {
			ok = true
		}
		if !ok {
			return nil, fmt.Errorf("scenario %s: source %q is neither a script nor the upstream tool", sc.Name, src)
		}
	}
	for _, p := range []string{sc.Policy.Find, sc.Policy.Grep} {
		if _, err := regexp.Compile(p); err != nil {
			return nil, fmt.Errorf("scenario %s: policy pattern %q: %w", sc.Name, p, err)
		}
	}
	if sc.Policy.Find == "" || len(sc.Policy.Start) == 0 {
		return nil, fmt.Errorf("scenario %s: the policy needs start calls and a find pattern", sc.Name)
	}
	if sc.Policy.Next != nil {
		if _, err := regexp.Compile(sc.Policy.Next.Find); err != nil {
			return nil, fmt.Errorf("scenario %s: policy next pattern: %w", sc.Name, err)
		}
	}
	return &sc, nil
}

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
