package scrollback

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"al.essio.dev/pkg/shellescape"

	"github.com/scrollback-dev/scrollback/capture"
	"github.com/scrollback-dev/scrollback/internal/utf8x"
	"github.com/scrollback-dev/scrollback/jsonq"
	"github.com/scrollback-dev/scrollback/present"
	"github.com/scrollback-dev/scrollback/preview"
	"github.com/scrollback-dev/scrollback/runner"
	"github.com/scrollback-dev/scrollback/store"
)

// Recovery states: whether the text not shown in a preview can be read back.
const (
	RecoveryNotNeeded   = "not_needed"  // everything was shown
	RecoveryAvailable   = "available"   // a retained copy was saved: read it with read_tool_output
	RecoveryUnavailable = "unavailable" // saving the copy failed: see recovery_error
)

// RunCommandInput is the input of run_command. The zero value of every
// field but Command (or Args) is a valid default.
type RunCommandInput struct {
	// Command is the command line to run with /bin/sh -c (cmd.exe /d /s
	// /c on Windows). Give it or Args, not both; one of them is required.
	Command string `json:"command"`

	// Cwd is the working directory the command starts in; "" = this
	// process's own. A directory that does not exist is an argument
	// error, and the command is not run.
	Cwd string `json:"cwd,omitempty"`

	// TimeoutMS is how many milliseconds the command may run before its
	// whole process group is stopped (SIGTERM, then SIGKILL after a
	// grace period): the result then has TimedOut set, with the output
	// up to then. 0 = Options.DefaultTimeout (none unless set); negative
	// is an argument error.
	TimeoutMS int64 `json:"timeout_ms,omitempty"`

	// Env holds variables added to the environment the command inherits
	// from this process, replacing any of the same name; nil = the
	// inherited environment as it is. A name that is empty or holds '='
	// or NUL, or a value holding NUL, is an argument error.
	Env map[string]string `json:"env,omitempty"`

	// Stdin is the text the command reads on its standard input; "" =
	// an empty standard input (/dev/null), unless StdinFile is given.
	Stdin string `json:"stdin,omitempty"`

	// Preview chooses how many bytes of head and tail the preview shows
	// when the output does not fit the preview budget (see
	// PreviewShape); nil = the default split of Options.ShownBytes.
	Preview *PreviewShape `json:"preview,omitempty"`

	// Args, for Go callers only, runs a program with exactly these
	// arguments and no shell, instead of Command (give one or the other):
	// Args[0] is found on the PATH the command gets, a program not found
	// ends with exit code 127 and one that cannot run with 126, as
	// package runner says. It is how `scrollback run -- ARG ARG...` runs;
	// run_command over MCP takes only Command.
	Args []string `json:"-"`

	// StdinFile, for Go callers only, is the command's standard input as
	// it is, inherited rather than copied (give it or Stdin, not both):
	// `scrollback run` passes its own stdin on this way when it is a pipe
	// or a file. It must be open (a closed one is an argument error).
	// run_command over MCP takes only Stdin.
	StdinFile *os.File `json:"-"`

	// Output, for Go callers only, also receives the command's output
	// as it comes, stdout and stderr each in order (their writes
	// interleaved as they arrive, one at a time), whatever the caps
	// retain: to show a command's progress while it runs, as
	// `scrollback run` does on a terminal. A write to it holds up the
	// command's output, so it should return quickly; its errors are
	// ignored, and the capture goes on.
	Output io.Writer `json:"-"`
}

// PreviewShape lets the caller choose what a preview that does not fit
// shows: a model that knows the answer is at the end asks for the tail.
// By default a retained output shows what the footer leaves of
// Options.ShownBytes, split 3:2 between head and tail (preview.ShownHead
// and preview.ShownTail beside a short footer). Head and tail together must fit the
// preview budget; asking for more than the default shows makes the preview
// grow to hold them. A part left out gets what the other leaves of the
// default, and 0 means none of that part.
type PreviewShape struct {
	HeadBytes *int `json:"head_bytes,omitempty"` // bytes of the output's start to show; nil = the default share, 0 = none
	TailBytes *int `json:"tail_bytes,omitempty"` // bytes of the output's end to show; nil = the default share, 0 = none
}

// RunCommandResult is the result of run_command.
//
// Its preview fields are Shown's, embedded in two parts so that the JSON
// keeps the contract's order: preview, truncated and output_id first, the
// command's own fields, then the copy's.
type RunCommandResult struct {
	ShownText
	ExitCode    *int   `json:"exit_code"`        // null when killed by a signal
	Signal      string `json:"signal,omitempty"` // the signal that killed it, e.g. "SIGKILL"
	TimedOut    bool   `json:"timed_out"`        // the timeout (TimeoutMS, else Options.DefaultTimeout) stopped the command
	DurationMS  int64  `json:"duration_ms"`      // wall time from start to exit, in milliseconds
	StdoutBytes int64  `json:"stdout_bytes"`     // bytes the command wrote to stdout, counted past the caps
	StderrBytes int64  `json:"stderr_bytes"`     // bytes the command wrote to stderr, counted past the caps
	ShownCopy
	Gap *GapRef `json:"gap,omitempty"` // the copy kept head and tail past the cap; this is what it dropped
}

// GapRef describes bytes dropped from the middle of a copy that crossed the
// copy cap: a marker line stands at Offset in the copy. It is the one gap
// type (present.Gap): capture reports it, the footer says it, the result
// carries it.
type GapRef = present.Gap

// RunCommand runs in.Command with /bin/sh -c in its own process group
// (cmd.exe /d /s /c in a job object on Windows: see package runner), or
// in.Args as an argument vector, without a shell, in the same way;
// captures stdout and stderr merged in arrival order, and returns a preview.
// When the output does not fit the preview budget it is saved as a retained
// copy of this session first. A non-zero exit, a signal and a timeout are
// results, not errors; an error means the command could not be run at all
// (bad arguments, a missing working directory), or that ctx ended while it
// ran: then its process group is stopped, and the result holds the output
// up to then (and its copy) beside an *Error that errors.Is finds as
// ctx's error and as ErrUnavailable.
func (s *Session) RunCommand(ctx context.Context, in RunCommandInput) (RunCommandResult, error) {
	const op = "run_command"
	if err := s.usable(op); err != nil {
		return RunCommandResult{}, err
	}
	switch {
	case len(in.Args) > 0 && in.Command != "":
		return RunCommandResult{}, errorf(op, ErrArgument, "give a shell command line in Command or an argument vector in Args, not both", "both command and args are given")
	case len(in.Args) == 0 && strings.TrimSpace(in.Command) == "":
		return RunCommandResult{}, errorf(op, ErrArgument, `pass the shell command to run, e.g. {"command": "ls -la"}`, "command is empty")
	}
	timeout, err := timeoutOf(op, in.TimeoutMS, "")
	if err != nil {
		return RunCommandResult{}, err
	}
	head, tail, err := s.previewShape(op, in.Preview)
	if err != nil {
		return RunCommandResult{}, err
	}
	if timeout == 0 {
		timeout = s.e.opts.DefaultTimeout
	}
	cp := capture.New(s.e.opts.Capture)
	sp := s.startSpill(ctx, cp, preview.HeadFrom(s.previewOptions(s.e.opts.PreviewBudget, head, tail)))
	var tapMu sync.Mutex
	res, err := runner.Run(ctx, runner.Command{
		Command:   in.Command,
		Args:      in.Args,
		Dir:       in.Cwd,
		Env:       in.Env,
		Stdin:     in.Stdin,
		StdinFile: in.StdinFile,
		Timeout:   timeout,
		Stdout:    tap(cp.Stdout(), in.Output, &tapMu),
		Stderr:    tap(cp.Stderr(), in.Output, &tapMu),
		Gather:    s.e.opts.GatherOutput,
	})
	if err != nil && res.Duration == 0 {
		// Not started: a bad working directory or environment, or the
		// caller went away first.
		if p, _, _ := sp.end(); p != nil {
			p.Abort(context.WithoutCancel(ctx))
		}
		var rerr *runner.Error
		if errors.As(err, &rerr) {
			return RunCommandResult{}, &Error{Op: op, Err: ErrArgument, Msg: strings.TrimPrefix(rerr.Error(), "runner: ")}
		}
		if why := callEnded(err); why != "" {
			return RunCommandResult{}, &Error{Op: op, Err: err, Msg: present.CommandNotStarted(why)}
		}
		return RunCommandResult{}, &Error{Op: op, Err: err, Msg: err.Error()}
	}
	got := cp.Result()
	pending, spilled, spillErr := sp.end()
	out := RunCommandResult{
		ExitCode:    res.ExitCode,
		Signal:      res.Signal,
		TimedOut:    res.TimedOut,
		DurationMS:  res.Duration.Milliseconds(),
		StdoutBytes: got.StdoutBytes,
		StderrBytes: got.StderrBytes,
	}
	var gap *preview.Gap
	if got.Gap != nil {
		g := *got.Gap
		gap, out.Gap = got.Gap, &g
	}
	shown := s.retain(ctx, retainRequest{
		tool:   op,
		source: in.source(),
		data:   got.Copy,
		// Reading stopped while a process outside the group held the
		// output open: what it wrote later is in no copy.
		complete: got.Complete && !res.OutputCut,
		budget:   s.e.opts.PreviewBudget,
		// A cap cut the output: the copy is not all of it, however
		// small, so it is not shown as if it were.
		over:     gap != nil,
		status:   commandStatus(res, timeout),
		gap:      gap,
		head:     head,
		tail:     tail,
		stderr:   failedStderr(res, got.StderrTail),
		pending:  pending,
		spilled:  spilled,
		spillErr: spillErr,
		errors:   sp.scanner(),
	})
	out.ShownText, out.ShownCopy = shown.ShownText, shown.ShownCopy
	if err != nil {
		// The command ran but the caller went away (ctx cancelled): the
		// result is still whole, and so is its copy, if one was made.
		msg := err.Error()
		if why := callEnded(err); why != "" {
			msg = present.CommandStopped(why, out.DurationMS, out.OutputID, out.TotalBytes, out.Recovery != RecoveryUnavailable)
		}
		return out, &Error{Op: op, Err: err, Msg: msg}
	}
	return out, nil
}

// callEnded says why a call's context ended, when err is that: "" for
// any other error.
func callEnded(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return present.CallCancelled
	case errors.Is(err, context.DeadlineExceeded):
		return present.CallDeadline
	}
	return ""
}

// maxTimeoutMS is the longest timeout_ms a time.Duration holds (about 292
// years); more would wrap around to a short or negative timeout.
const maxTimeoutMS = math.MaxInt64 / int64(time.Millisecond)

// timeoutOf is a tool's timeout_ms as a duration, 0 for the default (which
// dflt names in the error, if not ""); negative or too large is an
// argument error.
func timeoutOf(op string, ms int64, dflt string) (time.Duration, error) {
	if dflt != "" {
		dflt = " (" + dflt + ")"
	}
	switch {
	case ms < 0:
		return 0, errorf(op, ErrArgument, "give a positive number of milliseconds, or 0 for the default"+dflt, "timeout_ms %d is negative", ms)
	case ms > maxTimeoutMS:
		return 0, errorf(op, ErrArgument, fmt.Sprintf("give at most %d milliseconds (about 292 years), or 0 for the default%s", maxTimeoutMS, dflt), "timeout_ms %d is too large", ms)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// source is what ran, for people listing copies: the command line, or the
// argument vector quoted as a POSIX shell would need it to run the same.
func (in RunCommandInput) source() string {
	if len(in.Args) > 0 {
		return shellescape.QuoteCommand(in.Args)
	}
	return in.Command
}

// previewShape checks a caller's head and tail request against the budget
// and turns it into preview options (-1: none of that part).
func (s *Session) previewShape(op string, p *PreviewShape) (head, tail int, err error) {
	if p == nil {
		return 0, 0, nil
	}
	budget := s.e.opts.PreviewBudget
	part := func(name string, v *int) (int, error) {
		switch {
		case v == nil:
			return 0, nil
		case *v < 0:
			return 0, errorf(op, ErrArgument, "give 0 or more bytes", "preview.%s %d is negative", name, *v)
		case *v == 0:
			return -1, nil
		}
		return *v, nil
	}
	if head, err = part("head_bytes", p.HeadBytes); err != nil {
		return 0, 0, err
	}
	if tail, err = part("tail_bytes", p.TailBytes); err != nil {
		return 0, 0, err
	}
	if max(head, 0)+max(tail, 0) > budget {
		return 0, 0, errorf(op, ErrArgument, fmt.Sprintf("head_bytes and tail_bytes together must be at most the preview budget, %d", budget),
			"preview asks for %d + %d bytes", max(head, 0), max(tail, 0))
	}
	if head == -1 && tail == -1 {
		return 0, 0, errorf(op, ErrArgument, "ask for a head, a tail or both", "preview.head_bytes and preview.tail_bytes are both 0")
	}
	return head, tail, nil
}

// commandStatus says how a command ended, for the preview footer; "" for a
// zero exit.
func commandStatus(r runner.Result, timeout time.Duration) string {
	return present.CommandStatus(r.TimedOut, timeout, r.Signal, r.ExitCode)
}

// Shown is what a tool result turned into: the text shown at once and the
// recovery reference for the rest.
// It is the one definition of the preview fields every tool result shares;
// RunCodeResult embeds it whole, RunCommandResult its two parts.
type Shown struct {
	ShownText
	ShownCopy
}

// ShownText is the text shown at once: the preview fields that come first
// in every result.
type ShownText struct {
	Preview   string `json:"preview"`             // head, footer and tail; the whole result when it fits
	Truncated bool   `json:"truncated"`           // the preview is not the whole result
	OutputID  string `json:"output_id,omitempty"` // id of the retained copy, when one was saved
}

// ShownCopy is the state of the retained copy behind a preview.
type ShownCopy struct {
	TotalBytes    int64  `json:"totalBytes"`               // length of the retained copy (of the whole result when none was needed)
	Complete      bool   `json:"complete"`                 // the copy (or the preview, when not truncated) holds the whole result
	Recovery      string `json:"recovery"`                 // not_needed, available or unavailable
	RecoveryError string `json:"recovery_error,omitempty"` // with recovery "unavailable": why the copy could not be saved
}

// RetainInput is a tool result to show within a budget.
type RetainInput struct {
	Tool   string // the tool that produced it
	Source string // what it was called with, for people listing copies
	Data   []byte // the result's text as the model would see it
	// Complete says Data is the whole result. Leave it false when Data may
	// lack part of it (an upstream cap, a cut stream): the zero value claims
	// nothing, so a copy is never said to be whole by omission.
	Complete bool
	Budget   int // 0 = the engine's preview budget
	// Gap, when not nil, says where Data lacks a run of the result (head
	// and tail kept past a cap), for the footer.
	Gap *preview.Gap
	// Status is one sentence for the footer, e.g. the result's original
	// size; "" = none.
	Status string
	// Whole names the copies that hold the whole output this result only
	// wraps, for the footer to point at; nil = none.
	Whole []present.WholeCopy
}

// Retain shows a tool result within a budget: whole when it fits, else a
// preview whose footer leads to a retained copy saved in this session first.
// Save failures are reported in the result (Recovery "unavailable"), never as
// an error: the result is still shown.
//
// Data that fits the budget is shown whole, whatever its size. Data that
// does not, and is longer than the copy cap (8 MiB), is cut as
// run_command's output is: the copy keeps its head and tail around a
// marker line, and is incomplete; the preview is cut even when that copy
// would fit the budget.
func (s *Session) Retain(ctx context.Context, in RetainInput) Shown {
	return s.retainInput(ctx, in, false)
}

// retainInput is Retain; cut says a cap already cut in.Data from a larger
// result (run_code's return value, cut at the copy cap by the run), so
// that it is retained and previewed even when what is left fits the budget.
func (s *Session) retainInput(ctx context.Context, in RetainInput, cut bool) Shown {
	if err := s.usable("retain"); err != nil {
		// Nothing can be saved: the result is shown within the default
		// budget, and says why it was not kept.
		budget := in.Budget
		if budget <= 0 {
			budget = PreviewBudget
		}
		budget = max(budget, MinShownBytes)
		sh := Shown{ShownCopy: ShownCopy{TotalBytes: int64(len(in.Data)), Complete: in.Complete, Recovery: RecoveryNotNeeded}}
		p := preview.Render(in.Data, preview.Options{Budget: budget, Shown: budget}, preview.Footer{Unavailable: err.Error(), Complete: in.Complete})
		sh.Preview, sh.Truncated = p.Text, p.Truncated
		if p.Truncated {
			sh.Recovery, sh.RecoveryError = RecoveryUnavailable, present.NotSaved(err.Error())
		}
		return sh
	}
	budget := in.Budget
	if budget <= 0 {
		budget = s.e.opts.PreviewBudget
	}
	// Below MinShownBytes no footer fits: the preview would hide that a
	// copy exists.
	budget = max(budget, MinShownBytes)
	data, complete, gap := in.Data, in.Complete, in.Gap
	// A result that fits its budget is shown whole, whatever the copy cap:
	// no copy is made of it. Only one that does not is cut to the cap.
	over := cut
	if c := s.copyCap(); len(data) > c && !preview.Fits(data, budget) {
		over = true
		cp := capture.New(capture.Limits{Stdout: int64(len(data)), Copy: int64(c)})
		cp.Stdout().Write(data)
		got := cp.Result()
		data, complete = got.Copy, false
		if gap == nil || got.Gap != nil && gap.Offset >= got.Gap.Offset {
			gap = got.Gap // the caller's gap, if any, fell in what was dropped
		}
	}
	return s.retain(ctx, retainRequest{tool: in.Tool, source: in.Source, data: data, complete: complete, budget: budget,
		over: over, gap: gap, status: in.Status, whole: in.Whole})
}

// History shows an ordinary tool result entering a conversation history:
// whole up to the history budget (32 KiB), else its head and tail with the
// footer (within the shown size, 2 KiB by default), the whole text retained first in
// this session. It is Retain with
// the engine's history budget, for agents that put tool results into the
// model's context themselves.
func (s *Session) History(ctx context.Context, tool, source string, data []byte) Shown {
	if s == nil || s.e == nil {
		return s.Retain(ctx, RetainInput{Tool: tool, Source: source, Data: data, Complete: true, Budget: HistoryBudget})
	}
	return s.Retain(ctx, RetainInput{Tool: tool, Source: source, Data: data, Complete: true, Budget: s.e.opts.HistoryBudget})
}

type retainRequest struct {
	tool, source string
	data         []byte
	complete     bool
	budget       int
	// over says a cap cut data from a result that is not to be shown
	// whole (over its budget, or already cut by a capture cap): it is
	// retained and previewed even when data would fit the budget, not
	// shown as if it were the whole result.
	over       bool
	status     string
	gap        *preview.Gap
	whole      []present.WholeCopy
	head, tail int    // preview.Options.HeadBytes and TailBytes
	stderr     []byte // the stderr tail of a failed command, for an error-first preview

	// pending, when not nil, already holds data[:spilled] (see spill):
	// saving finishes it, and a result that fits aborts it.
	pending store.PendingCopy
	spilled int
	// spillErr is why spilling failed, when it did: nothing is pending.
	spillErr error
	// errors, when not nil, has searched a prefix of data for error-like
	// lines already (see spill).
	errors *present.ErrorScanner
}

func (s *Session) retain(ctx context.Context, r retainRequest) Shown {
	sh := Shown{ShownCopy: ShownCopy{TotalBytes: int64(len(r.data)), Complete: r.complete, Recovery: RecoveryNotNeeded}}
	if !r.over && preview.Fits(r.data, r.budget) {
		if r.pending != nil {
			r.pending.Abort(context.WithoutCancel(ctx))
		}
		sh.Preview = preview.Render(r.data, preview.Options{Budget: r.budget}, preview.Footer{}).Text
		return sh
	}
	f := preview.Footer{Surface: s.e.opts.Surface, Complete: r.complete, Status: r.status, Gap: r.gap, Whole: r.whole}
	// A JSON copy's outline is made while the copy is saved: scanning 8 MiB
	// costs about as much as saving it, and the two need not wait for
	// each other.
	var outline chan jsonq.Outline
	if jsonq.MayBeJSON(r.data) && len(r.whole) == 0 {
		outline = make(chan jsonq.Outline, 1)
		go func() {
			o, _ := jsonq.OutlineOf(r.data)
			outline <- o
		}()
	}
	// So are the error-like lines the footer lists, searched from where
	// the head can end; a running command's spill has searched its
	// settled head already (r.errors), so that only the rest is read now.
	opts := s.previewOptions(r.budget, r.head, r.tail)
	if r.over && preview.Fits(r.data, r.budget) {
		opts.Budget = len(r.data) - 1 // cut, not shown whole: it lacks what the cap dropped
	}
	errs := make(chan *present.ErrorScan, 1)
	go func() { errs <- r.errors.Finish(r.data, preview.HeadFrom(opts)) }()
	// The copy is saved even when the caller has gone away meanwhile (a
	// client that disconnected mid-command): the session outlives the call.
	info, err := s.save(context.WithoutCancel(ctx), r, store.CopyMeta{
		Tool:         r.tool,
		Source:       r.source,
		Complete:     r.complete,
		OmittedBytes: gapBytes(r.gap),
		OmittedLines: gapLines(r.gap),
	})
	// Once retained, the result shows the shown size; when it could not
	// be saved, nothing can be read back, so it shows its whole budget
	// (and the cut searches for error-like lines itself).
	f.Errors = <-errs
	if err != nil {
		sh.Recovery = RecoveryUnavailable
		sh.RecoveryError = present.NotSaved(err.Error())
		f.Unavailable = err.Error()
		opts.Shown = opts.Budget
	} else {
		sh.Recovery = RecoveryAvailable
		sh.OutputID = info.ID
		f.ID = info.ID
		if outline != nil {
			o := <-outline
			f.Outline = o.Text(preview.OutlineBytes)
			if o.Documents == 1 {
				// One JSON document is data, not a log: its "error-like
				// lines" are pieces of it (an issue titled "… fails
				// when …") that would crowd the outline out of a small
				// footer. A stream of JSON Lines keeps them: there they
				// are log records.
				f.Errors = &present.ErrorScan{} // searched: none to list
			}
		}
	}
	p := preview.Render(r.data, opts, f)
	if block := stderrBlock(r.stderr, r.status, r.data[:p.HeadEnd], r.data[p.TailStart:], opts.Shown); block != "" {
		// Error first: the failure's own words lead the preview, and the
		// head and tail share what is left of the shown size.
		opts.Shown -= len(block)
		opts.Budget -= len(block)
		h, t := preview.Split(opts.Shown)
		if r.head != 0 || r.tail != 0 {
			h, t = shrink(r.head, opts.Shown), shrink(r.tail, opts.Shown)
		}
		opts.HeadBytes, opts.TailBytes = h, t
		p = preview.Render(r.data, opts, f)
		p.Text = block + p.Text
	}
	sh.Preview, sh.Truncated = p.Text, p.Truncated
	return sh
}

// previewOptions are the options of a preview of a result over budget,
// with the caller's head and tail (0: the default split).
func (s *Session) previewOptions(budget, head, tail int) preview.Options {
	return preview.Options{Budget: budget, Shown: s.e.opts.ShownBytes, HeadBytes: head, TailBytes: tail}
}

// save stores r.data as a retained copy: by finishing the pending copy
// that already holds its head, when there is one, else (or should that
// fail) in one SaveCopy. A save that found the database locked past its
// busy timeout is not tried again: the result would wait as long again
// (and again for each try) before saying the same.
func (s *Session) save(ctx context.Context, r retainRequest, meta store.CopyMeta) (store.CopyInfo, error) {
	if errors.Is(r.spillErr, store.ErrBusy) {
		return store.CopyInfo{}, r.spillErr
	}
	if r.pending != nil {
		info, err := r.pending.Finish(ctx, meta, bytes.NewReader(r.data[r.spilled:]))
		if err == nil {
			return info, nil
		}
		abort(ctx, r.pending, err)
		if errors.Is(err, store.ErrBusy) {
			return store.CopyInfo{}, err
		}
	}
	return s.saveCopy(ctx, meta, r.data)
}

// shrink keeps a caller's head or tail request within a smaller budget.
func shrink(n, budget int) int {
	if n > budget {
		return budget
	}
	return n
}

// failedStderr returns the stderr tail of a command that failed (non-zero
// exit, signal or timeout), or nil.
func failedStderr(r runner.Result, tail []byte) []byte {
	if r.TimedOut || r.Signal != "" || r.ExitCode != nil && *r.ExitCode != 0 {
		return tail
	}
	return nil
}

// stderrBlockMax is the most an error-first block takes of a failed
// command's preview of budget bytes, its own words included: a sixth of
// the budget, at most 4 KiB, and at least 384 bytes (a third of a smaller
// budget) so that the default 1,280 bytes shown still hold a compiler's
// last two or three lines; a sixth of it left 47 bytes of stderr.
func stderrBlockMax(budget int) int { return min(max(budget/6, 384), budget/3, 4<<10) }

// stderrBlock returns the error-first block of a failed command's preview:
// the end of what it wrote to stderr, when neither the preview's head nor its
// tail already shows it. "" when there is nothing to add.
func stderrBlock(stderr []byte, status string, shownHead, shownTail []byte, budget int) string {
	stderr = bytes.TrimRight(stderr, "\n")
	if len(stderr) == 0 {
		return ""
	}
	lastLine := stderr[bytes.LastIndexByte(stderr, '\n')+1:]
	if bytes.Contains(shownTail, lastLine) || bytes.Contains(shownHead, lastLine) {
		return "" // the preview already shows the error's last words
	}
	max := stderrBlockMax(budget) - present.StderrBlockOverhead - len(status)
	if max <= 0 {
		return ""
	}
	if len(stderr) > max {
		// Keep the end, starting at a line if one starts near the cut.
		stderr = utf8x.Tail(stderr, max)
		if i := bytes.IndexByte(stderr, '\n'); i >= 0 && i < max/4 {
			stderr = stderr[i+1:]
		}
	}
	return present.StderrBlock(status, stderr)
}

func gapBytes(g *preview.Gap) int64 {
	if g == nil {
		return 0
	}
	return g.Bytes
}

func gapLines(g *preview.Gap) int64 {
	if g == nil {
		return 0
	}
	return g.Lines
}

// tap returns w, writing each p to out as well when out is not nil. mu
// serialises the writes to out of stdout's tap and stderr's. out's errors
// are ignored: a progress display that fails must not cost the capture.
func tap(w, out io.Writer, mu *sync.Mutex) io.Writer {
	if out == nil {
		return w
	}
	return tapWriter{w, out, mu}
}

type tapWriter struct {
	w, out io.Writer
	mu     *sync.Mutex
}

func (t tapWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	t.mu.Lock()
	t.out.Write(p[:n])
	t.mu.Unlock()
	return n, err
}
