package scrollback

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/scrollback-dev/scrollback/codemode"
	"github.com/scrollback-dev/scrollback/present"
	"github.com/scrollback-dev/scrollback/store"
)

// RunCodeInput is the input of run_code.
type RunCodeInput struct {
	// Code is the body of an async function, in JavaScript or
	// TypeScript, that calls the tools as tools.NAME({...}) and returns
	// the value to show; required (empty or blank is an argument error).
	Code string `json:"code"`

	// TimeoutMS is how many milliseconds the whole run may take, the
	// tool calls it makes included; past it the script is stopped and
	// the result's Error (kind "timeout") says so. 0 = 30000
	// (codemode.DefaultTimeout); negative is an argument error.
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
}

// RunCodeResult is the result of run_code. Preview through RecoveryError
// show the script's return value as any result is shown; Retained lists
// every copy made during the run, whatever the script returned, and last
// the console output's copy (present.HoldsLogs), when Logs is a preview
// of one.
//
// Its preview (of the return value: a string as itself, anything else as
// JSON) and the copy's fields are Shown's.
type RunCodeResult struct {
	Shown
	Logs string `json:"logs"` // console output, bounded; a preview with a footer when over the preview budget
	// LogsOutputID is the copy of the console output, when it was over the
	// preview budget and Logs is its preview (whose footer names it). It
	// is not a field of the JSON, whose shape the contract fixes: the JSON
	// lists it in retained, with holds "logs".
	LogsOutputID   string          `json:"-"`
	LogsTotalBytes int64           `json:"-"`               // the size of that copy
	Error          *codemode.Error `json:"error,omitempty"` // why the script stopped: {kind, message, line, column}
	Retained       []codemode.Ref  `json:"retained"`        // [{call, tool, output_id, totalBytes, complete, holds, command?}], [] when none
	// Returned is whether the script returned a value (undefined is
	// none): with an empty Preview, it returned "".
	Returned bool `json:"-"`
}

// RunCode runs in.Code, the body of an async function in TypeScript or
// JavaScript, with the session's tools (run_command, read_file,
// read_tool_output, grep_tool_output, query_tool_output) and extra (an
// upstream server's tools, behind the proxy) callable as tools.NAME(args),
// with or without await; an extra tool may not take the name of another
// (an argument error). A nested result longer than the preview budget is
// saved as a retained copy of this session before the script
// receives it, and listed in Retained; so is a nested command's own copy.
// The return value is previewed like any result. A script that fails is a
// result with Error set, not an error: an error means bad arguments. With
// Options.CodeWorkers the script runs in a worker process (codemode.Pool).
func (s *Session) RunCode(ctx context.Context, in RunCodeInput, extra ...codemode.Tool) (RunCodeResult, error) {
	return s.RunCodeOver(ctx, in, nil, extra...)
}

// RunCodeOver is RunCode with only the session's tools named in own (all
// of them when own is nil, none when it is empty) callable beside extra:
// the proxy's scripts call the tools the proxy lists, not the shell or
// the files of the proxy's host.
func (s *Session) RunCodeOver(ctx context.Context, in RunCodeInput, own []string, extra ...codemode.Tool) (RunCodeResult, error) {
	const op = "run_code"
	if err := s.usable(op); err != nil {
		return RunCodeResult{}, err
	}
	if strings.TrimSpace(in.Code) == "" {
		return RunCodeResult{}, errorf(op, ErrArgument, `pass the body of an async function, e.g. {"code": "const r = await tools.run_command({command: 'ls'}); return r.preview"}`, "code is empty")
	}
	timeout, err := timeoutOf(op, in.TimeoutMS, "30000")
	if err != nil {
		return RunCodeResult{}, err
	}
	tools := append(codeTools(s, own), extra...)
	if err := namesFree(op, tools); err != nil {
		return RunCodeResult{}, err
	}
	res := s.e.opts.CodeWorkers.Run(ctx, in.Code, tools, codemode.Options{
		Save:    s.saveNested,
		Timeout: timeout,
		Budget:  s.e.opts.PreviewBudget,
		CopyCap: s.copyCap(),
	})
	out := RunCodeResult{Logs: res.Logs, Error: res.Error, Retained: res.Retained}
	out.Complete, out.Recovery = true, RecoveryNotNeeded
	if len(res.Logs) > s.e.opts.PreviewBudget {
		// Shown as any result is: a preview whose footer leads to a copy
		// of all of it, not up to the console bound at once.
		logs := s.Retain(ctx, RetainInput{Tool: op, Source: "run_code console: " + present.Clip(firstLine(in.Code), 100), Data: []byte(res.Logs), Complete: !res.LogsCut})
		out.Logs, out.LogsOutputID, out.LogsTotalBytes = logs.Preview, logs.OutputID, logs.TotalBytes
		// Listed with the other copies made during the call, so that a
		// client of the JSON finds it without reading the footer in logs;
		// a failed save is listed as the bridge lists one.
		if logs.OutputID != "" || logs.Recovery == RecoveryUnavailable {
			out.Retained = append(out.Retained, codemode.Ref{Tool: op, OutputID: logs.OutputID, TotalBytes: logs.TotalBytes,
				Complete: logs.Complete, Holds: present.HoldsLogs, RecoveryError: logs.RecoveryError})
		}
	}
	if res.Value != nil {
		out.Returned = true
		// A value the run cut at the copy cap is not the whole result, even
		// when what is left fits the preview budget (a copy cap set below
		// it): it is retained and previewed as a cut result is.
		out.Shown = s.retainInput(ctx, RetainInput{Tool: op, Source: codeSource(in.Code), Data: res.Value, Complete: res.Complete,
			Whole: wholeCopies(res.Value, res.Retained)}, !res.Complete)
	}
	return out, nil
}

// namesFree refuses two callable tools of one name: in the script's tools
// object the later would silently replace the earlier. Tools a run skips
// (no name, no Call, run_code itself) are not counted.
func namesFree(op string, tools []codemode.Tool) error {
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if t.Name == "" || t.Name == codemode.Name || t.Call == nil {
			continue
		}
		if seen[t.Name] {
			return errorf(op, ErrArgument, "rename the extra tool, or leave the session's tool of that name out with RunCodeOver",
				"two tools are named %s: a script could call only one of them", quoteArg(t.Name))
		}
		seen[t.Name] = true
	}
	return nil
}

// wholeCopies are the copies made during a run that hold a tool's whole
// output and that the return value names (a command's result returned as
// it is): the footer of a retained return value points there rather than
// into the value, which only wraps a preview of them.
func wholeCopies(value []byte, refs []codemode.Ref) []present.WholeCopy {
	var out []present.WholeCopy
	for _, r := range refs {
		if r.Holds == present.HoldsOutput && r.OutputID != "" && bytes.Contains(value, []byte(r.OutputID)) {
			out = append(out, present.WholeCopy{ID: r.OutputID, Call: r.Call, Tool: r.Tool, Command: r.Command})
		}
	}
	return out
}

// copyCap is the most bytes one retained copy of a nested result holds.
func (s *Session) copyCap() int { return s.e.opts.CopyLimit() }

// CopyLimit is the most bytes one retained copy holds under these options:
// Capture.Copy when it is set below the contract's CopyCap, else CopyCap.
func (o Options) CopyLimit() int {
	if c := o.Capture.Copy; c > 0 && c < CopyCap {
		return int(c)
	}
	return CopyCap
}

// saveNested is the bridge's save: a nested result becomes a copy of this
// session.
func (s *Session) saveNested(ctx context.Context, c codemode.Copy) (string, error) {
	info, err := s.saveCopy(ctx, store.CopyMeta{Tool: c.Tool, Source: nestedSource(c), Complete: c.Complete}, c.Text)
	if err != nil {
		return "", err
	}
	return info.ID, nil
}

// nestedSource names a nested call's copy in the copy list: the call, cut
// to 200 bytes.
func nestedSource(c codemode.Copy) string {
	return present.Clip(fmt.Sprintf("run_code call %d: %s(%s)", c.Call, c.Tool, c.Args), 200)
}

// codeSource names a script in the copy list: its first line.
func codeSource(code string) string {
	return "run_code: " + present.Clip(firstLine(code), 120)
}

// firstLine is a script's first line.
func firstLine(code string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(code), "\n")
	return line
}

// CodeTools returns the session's tools as Code Mode tools: run_command,
// read_file, read_tool_output, grep_tool_output and query_tool_output, in
// that order, each with its input and output JSON Schemas and a Call that
// takes and returns the contract's JSON. Their Description is empty (a
// run_code declaration carries no prose); the descriptions a model reads
// are present.RunCommandDoc, ReadFileDoc, ReadToolOutputDoc,
// GrepToolOutputDoc and QueryToolOutputDoc. On a Session no Engine made,
// every tool's Call returns the same error as the Session's own methods.
func (s *Session) CodeTools() []codemode.Tool {
	if s == nil {
		s = new(Session) // codeTools(nil, nil) would leave Call nil
	}
	return codeTools(s, nil)
}

// CodeDescription returns the description of the run_code tool: what a
// script can do (present.RunCodeDoc) and, generated from the tools'
// schemas, a TypeScript declaration of the tools it can call (the
// session's tools plus extra): their result types, not their prose or
// their inputs, which a client lists with the tools themselves, sent with
// every request; the description says so (present.CodeInputsListed). Declaring the
// inputs again cost 650 bytes a request for scrollback's own tools alone.
//
// The extra tools (the proxy's upstream tools, each listed beside run_code
// with its own input schema) keep their result types while the declaration
// fits MaxCodeDeclaration; past it they lose them, so that an upstream of
// many tools does not double what is sent with every request.
func CodeDescription(extra ...codemode.Tool) string {
	return CodeDescriptionOver(nil, extra...)
}

// CodeDescriptionOver is CodeDescription for RunCodeOver: it declares
// only the session's tools named in own (all when nil) beside extra.
func CodeDescriptionOver(own []string, extra ...codemode.Tool) string {
	tools := append(codeTools(nil, own), extra...)
	for i := range tools {
		tools[i].InputSchema = nil
	}
	decl := codemode.Describe(tools)
	if len(decl) > MaxCodeDeclaration && len(extra) > 0 {
		for i := len(tools) - len(extra); i < len(tools); i++ {
			tools[i].OutputSchema = nil
		}
		decl = codemode.Describe(tools)
	}
	return present.RunCodeDoc + "\n\n" + decl
}

// MaxCodeDeclaration is the size of run_code's declaration past which the
// upstream tools lose their result types (CodeDescription): 4 KiB.
const MaxCodeDeclaration = 4 << 10

// codeTools lists the session's tools named in only (all when nil); with
// s nil, without Call (for descriptions). They carry no description:
// run_code's declaration gives their types, and a client lists their
// descriptions with the tools.
func codeTools(s *Session, only []string) []codemode.Tool {
	all := []codemode.Tool{
		codeTool(s, "run_command", (*Session).runCommandInRun),
		codeTool(s, "read_file", (*Session).ReadFile),
		codeTool(s, "read_tool_output", (*Session).ReadToolOutput),
		codeTool(s, "grep_tool_output", (*Session).GrepToolOutput),
		codeTool(s, "query_tool_output", (*Session).QueryToolOutput),
	}
	if only == nil {
		return all
	}
	return slices.DeleteFunc(all, func(t codemode.Tool) bool { return !slices.Contains(only, t.Name) })
}

// codeTool binds one session method as a Code Mode tool.
func codeTool[In, Out any](s *Session, name string, method func(*Session, context.Context, In) (Out, error)) codemode.Tool {
	t := codemode.Tool{
		Name:         name,
		InputSchema:  schemaFor[In](true),
		OutputSchema: schemaFor[Out](false),
	}
	if s == nil {
		return t
	}
	t.Call = func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		var in In
		if err := decodeArgs(name, args, &in, fieldNames[In]()); err != nil {
			return nil, &codemode.KindError{Err: err, Kind: KindArgument}
		}
		out, err := method(s, ctx, in)
		if err != nil {
			err = &codemode.KindError{Err: err, Kind: ErrorKind(err)}
			if reflect.ValueOf(&out).Elem().IsZero() {
				return nil, err
			}
			// A result with the error (a command that ran, then the
			// run ended): Code Mode lists the copy it made.
			j, _ := json.Marshal(out)
			return j, err
		}
		return json.Marshal(out)
	}
	return t
}

// runCommandInRun is run_command as a script calls it: a command that
// would outlive the run (its timeout, or the default, ends after the
// run's) is given a timeout that ends it a little before the run does, so
// that it ends as a timed-out result the script receives, its output and
// copy included, rather than be killed with the run and its output shown
// to no one.
func (s *Session) runCommandInRun(ctx context.Context, in RunCommandInput) (RunCommandResult, error) {
	if deadline, ok := ctx.Deadline(); ok && in.TimeoutMS >= 0 && in.TimeoutMS <= maxTimeoutMS {
		left := time.Until(deadline)
		left -= min(max(left/5, 250*time.Millisecond), 2*time.Second) // for the script to go on
		timeout := time.Duration(in.TimeoutMS) * time.Millisecond
		if timeout == 0 {
			timeout = s.e.opts.DefaultTimeout
		}
		if timeout == 0 || timeout > left {
			in.TimeoutMS = max(left.Milliseconds(), 1)
		}
	}
	return s.RunCommand(ctx, in)
}

// decodeArgs decodes a tool's arguments, which must be one JSON object
// and nothing after it, into v: anything else would run the tool with
// arguments other than the caller's (null as none, the second of two
// objects dropped). names lists the arguments, for the hint.
func decodeArgs(tool string, args json.RawMessage, v any, names string) error {
	hint := "pass the arguments as one JSON object; they are: " + names
	switch a := bytes.TrimSpace(args); {
	case len(a) == 0:
		return errorf(tool, ErrArgument, hint, "bad arguments: nothing was given, not an object")
	case a[0] != '{':
		return errorf(tool, ErrArgument, hint, "bad arguments: %s is not an object", quoteArg(string(a)))
	}
	dec := json.NewDecoder(bytes.NewReader(wholeNumbers(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errorf(tool, ErrArgument, "the arguments are: "+names, "bad arguments: %s", argumentError(err))
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		return errorf(tool, ErrArgument, "pass one JSON object and nothing after it",
			"bad arguments: more follows the object, which ends at byte %d: %s", end, quoteArg(string(bytes.TrimSpace(args[end:]))))
	}
	return nil
}

// maxExactWhole is the largest magnitude up to which every whole number
// is a float64 exactly: past it, 1e17 and 100000000000000001 are one
// value, and a rewritten literal could name another integer than the
// caller's.
const maxExactWhole = 1 << 53

// wholeNumbers returns args with every number written with a fraction or
// an exponent whose value is a whole number of at most maxExactWhole in
// magnitude (1e3, 1000.0, -2.5e1) rewritten as that integer (1000, -25),
// so that it decodes into an integer input: JSON Schema's "integer" is any
// number with a zero fractional part, and the MCP server (whose SDK checks
// the schema on float64 values) accepts such numbers too. Strings are left
// as they are, and so is every other number: 1.5 still fails to decode
// into an integer, with the decoder's error. args is returned itself when
// nothing needs rewriting.
func wholeNumbers(args []byte) []byte {
	var out []byte // nil until a number is rewritten
	last := 0      // args[last:] is not yet in out
	for i := 0; i < len(args); {
		switch c := args[i]; {
		case c == '"':
			i++
			for i < len(args) && args[i] != '"' {
				if args[i] == '\\' {
					i++
				}
				i++
			}
			i++
		case c == '-' || '0' <= c && c <= '9':
			j := i + 1
			plain := true
			for j < len(args) && strings.IndexByte("0123456789.eE+-", args[j]) >= 0 {
				plain = plain && '0' <= args[j] && args[j] <= '9'
				j++
			}
			if !plain {
				if f, err := strconv.ParseFloat(string(args[i:j]), 64); err == nil && f == math.Trunc(f) && math.Abs(f) <= maxExactWhole {
					out = append(append(out, args[last:i]...), strconv.FormatInt(int64(f), 10)...)
					last = j
				}
			}
			i = j
		default:
			i++
		}
	}
	if out == nil {
		return args
	}
	return append(out, args[last:]...)
}

// argumentError says what is wrong with a tool's arguments in the
// script's terms (JSON types, argument names), not Go's. A whole number
// that does not fit its integer input (1e21, left as it is by
// wholeNumbers) is out of range: saying it is not an integer would be
// false.
func argumentError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		if num, ok := strings.CutPrefix(te.Value, "number "); ok && isInteger(te.Type) {
			if f, perr := strconv.ParseFloat(num, 64); (perr == nil || errors.Is(perr, strconv.ErrRange)) && f == math.Trunc(f) {
				return fmt.Sprintf("%s %s is out of range for %s", te.Field, present.Clip(num, 64), jsonType(te.Type))
			}
		}
		return fmt.Sprintf("%s must be %s, not %s", te.Field, jsonType(te.Type), article(te.Value))
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// isInteger reports whether t (or what it points to) is a Go integer
// type.
func isInteger(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// jsonType names the JSON type a Go type is decoded from, with its
// article.
func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if isInteger(t) {
		return "an integer"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a " + t.String()
}

// article puts "a" or "an" before a JSON value's kind as encoding/json
// names it ("number", "string", "object", "array", "bool").
func article(kind string) string {
	switch {
	case kind == "bool":
		return "a boolean"
	case strings.HasPrefix(kind, "number"):
		return "a number"
	case kind == "object" || kind == "array":
		return "an " + kind
	}
	return "a " + kind
}

// fieldNames lists the JSON names of a struct's fields, for error hints.
func fieldNames[T any]() string {
	var names []string
	t := reflect.TypeFor[T]()
	for i := 0; i < t.NumField(); i++ {
		if n, _, _ := jsonName(t.Field(i)); n != "" {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

// schemaFor returns the JSON Schema of T as the MCP SDK infers it (from the
// json and jsonschema tags), so that scripts and MCP clients see the same
// shapes.
func schemaFor[T any](input bool) json.RawMessage {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil
	}
	if input {
		s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	return b
}

// jsonName returns a field's JSON name and whether it has omitempty; ok is
// false for fields JSON skips.
func jsonName(f reflect.StructField) (name string, omitempty, ok bool) {
	if !f.IsExported() {
		return "", false, false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false, false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,"), true
}
