package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"al.essio.dev/pkg/shellescape"

	"github.com/scrollback-dev/scrollback"
)

// Flag errors are said here, once for every subcommand: the flag package's
// own ("invalid value "5" for flag -timeout: parse error") never reaches
// the user. Each names the flag, what it wants with an example, and what
// it got: "--timeout wants a duration such as 30s or 2m, got "5"".

// newFlagSet returns an empty flag set for subcommand name whose errors
// come back to parse, which says them in our words, and which prints
// nothing itself: Main prints the error, or the help on --help.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// wanter is a flag.Value of our own that says what it wants, and gives an
// example value, for the error of a value it refused.
type wanter interface {
	wants() (what, example string)
}

// flagWants says what flag f wants and gives an example value: from the
// Value itself when it is a wanter, else from the type the flag package
// parses into. ok is false for a flag that takes any string (which cannot
// be given a bad value) or whose type says nothing.
func flagWants(f *flag.Flag) (what, example string, ok bool) {
	v := f.Value
	switch w := v.(type) {
	case *recordingValue:
		v = w.Value
	case recordingBool:
		v = w.Value
	}
	if w, isW := v.(wanter); isW {
		what, example = w.wants()
		return what, example, true
	}
	g, isG := v.(flag.Getter)
	if !isG {
		return "", "", false
	}
	switch g.Get().(type) {
	case time.Duration:
		return "a duration", "30s or 2m", true
	case int, int64:
		return "a whole number", numberExample(f.DefValue), true
	case uint, uint64:
		return "a whole number of 0 or more", numberExample(f.DefValue), true
	case float64:
		return "a number", "0.5", true
	case bool:
		return "true or false", dashed(f.Name) + "=false (or " + dashed(f.Name) + " alone for true)", true
	}
	return "", "", false
}

// numberExample is the flag's default when that is a telling example (a
// positive number), else 10.
func numberExample(def string) string {
	if n, err := strconv.ParseInt(def, 10, 64); err == nil && n > 0 {
		return def
	}
	return "10"
}

// dashed is a flag's name as help shows it: -C for a one-letter flag,
// --name for the others (the flag package takes either form for either).
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// recordingValue wraps a flag's Value to remember which flag refused which
// value and why, for parse to say so: the flag package reports it only in
// a string of its own.
type recordingValue struct {
	flag.Value
	f      *flag.Flag
	failed **refused
}

// refused is a value a flag did not take.
type refused struct {
	f     *flag.Flag
	value string
	err   error
}

func (v *recordingValue) Set(s string) error {
	err := v.Value.Set(s)
	if err != nil {
		*v.failed = &refused{v.f, s, err}
	}
	return err
}

// recordingBool is a recordingValue for a boolean flag, which the flag
// package lets stand without a value.
type recordingBool struct{ *recordingValue }

func (recordingBool) IsBoolFlag() bool { return true }

// recordRefusals wraps every flag of fs in a recordingValue, so that the
// flag that refused a value is known in *failed after fs.Parse fails.
func recordRefusals(fs *flag.FlagSet, failed **refused) {
	fs.VisitAll(func(f *flag.Flag) {
		if _, done := f.Value.(*recordingValue); done {
			return
		}
		if _, done := f.Value.(recordingBool); done {
			return
		}
		rv := &recordingValue{Value: f.Value, f: f, failed: failed}
		if isBoolFlag(f) {
			f.Value = recordingBool{rv}
		} else {
			f.Value = rv
		}
	})
}

// flagError turns an error of fs.Parse(args) into a usage error in our
// words. bad is the value a flag refused, if that was the error; pos are
// the positional arguments that came before the failing flag.
func flagError(fs *flag.FlagSet, args []string, err error, bad *refused, pos []string) error {
	msg := err.Error()
	if bad != nil {
		e := usageError{msg: refusedText(bad)}
		// An offset too large for a number is out of range, the kind the
		// tools give any offset out of range (checkOffsetFlag).
		if (bad.f.Name == "offset" || bad.f.Name == "byte-offset") && outOfRange(bad.err) {
			e.kind = scrollback.KindOffset
		}
		return e
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		if f := fs.Lookup(name); f != nil {
			what, example, known := flagWants(f)
			if !known {
				// A string: its usage says what it is, often with an
				// example.
				arg, usage := flag.UnquoteUsage(f)
				if i := strings.LastIndex(usage, " (default"); i > 0 {
					usage = usage[:i]
				}
				return usagef("%s wants %s (%s), got nothing", dashed(name), arg, usage)
			}
			return usagef("%s wants %s such as %s, got nothing", dashed(name), what, example)
		}
	}
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return usageError{msg: unknownFlagText(fs, asGiven(name, args), pos)}
	}
	if arg, ok := strings.CutPrefix(msg, "bad flag syntax: "); ok {
		return usagef("%q is not a flag: write -NAME or --NAME (e.g. --json), and put arguments that start with - after --", arg)
	}
	return usageError{msg: strings.TrimPrefix(msg, "flag: ")}
}

// refusedText says which flag refused which value, what it wants and an
// example, with the value's own fault when it is telling.
func refusedText(bad *refused) string {
	what, example, known := flagWants(bad.f)
	if !known {
		return fmt.Sprintf("%s: %v", dashed(bad.f.Name), bad.err)
	}
	msg := fmt.Sprintf("%s wants %s such as %s, got %q", dashed(bad.f.Name), what, example, bad.value)
	switch {
	case outOfRange(bad.err):
		msg += " (out of range)"
	case what == "a duration":
		if _, err := strconv.ParseFloat(bad.value, 64); err == nil {
			msg += " (a duration needs a unit: s, m or h, e.g. " + bad.value + "s)"
		}
	}
	return msg
}

// outOfRange reports whether a flag refused a number too large for it
// (the flag package words strconv.ErrRange as its own error).
func outOfRange(err error) bool {
	return errors.Is(err, strconv.ErrRange) || strings.Contains(err.Error(), "out of range")
}

// asGiven returns flag name as it stands in args (-la or --la), the
// flag package having dropped its dashes.
func asGiven(name string, args []string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		if f, _, _ := strings.Cut(a, "="); f == "-"+name || f == "--"+name {
			return f
		}
	}
	return dashed(name)
}

// unknownFlagText says flag (as given, dashes included) does not exist,
// names the nearest one when it looks like a typo, and, after positional
// arguments pos, where an argument that starts with - goes: for a command
// that takes another command after --, that command's own flags; for the
// others, a pattern or filter such as -v.
func unknownFlagText(fs *flag.FlagSet, flagArg string, pos []string) string {
	msg := "unknown flag " + flagArg
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if near := nearest(strings.TrimLeft(flagArg, "-"), names); near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", dashed(near))
	}
	c, ok := lookup(fs.Name())
	switch {
	case fs.Lookup("db") == nil && isDBFlag(strings.TrimLeft(flagArg, "-")):
		msg += fmt.Sprintf(": %s opens no database, so it takes none of --db, --session and the quota flags", fs.Name())
	case ok && len(pos) > 0 && strings.Contains(c.usage, "-- "):
		msg += fmt.Sprintf("; a flag meant for the command goes after --, e.g. scrollback %s -- ls -la", c.name)
	case ok && len(pos) > 0:
		msg += fmt.Sprintf("; if %s is an argument, not a flag, put it after --: scrollback %s %s -- %s",
			flagArg, c.name, shellescape.QuoteCommand(pos), shellescape.Quote(flagArg))
	default:
		msg += fmt.Sprintf("; see scrollback %s --help for its flags", fs.Name())
	}
	return msg
}

// nearest returns the name in names nearest to s when it is close enough
// to be a typo (at most two edits, or a prefix), else "".
func nearest(s string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		d := editDistance(s, n)
		if len(s) >= 3 && strings.HasPrefix(n, s) {
			d = min(d, 1)
		}
		if d < bestD && d < len(n) && d < len(s) {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// checkPageFlags refuses, as flag mistakes, a --limit of bytes outside
// 1 to the page limit and a negative --offset: the engine would refuse
// them too, but as an error of the call (exit 1) that does not name the
// flag.
func checkPageFlags(offset int64, limit int) error {
	if limit < 1 || limit > scrollback.PageLimit {
		return badFlag("limit", fmt.Sprintf("a number of bytes from 1 to %d", scrollback.PageLimit), fmt.Sprint(scrollback.PageLimit), limit)
	}
	return checkOffsetFlag("offset", offset)
}

// checkOffsetFlag refuses a negative byte offset given to flag name, of
// the kind "offset" (out of range) that the tools give it.
func checkOffsetFlag(name string, offset int64) error {
	if offset < 0 {
		err := badFlag(name, "a byte offset of 0 or more", "4096", offset).(usageError)
		err.kind = scrollback.KindOffset
		return err
	}
	return nil
}

// badFlag is the usage error for a flag whose value parsed but is out of
// what the command accepts: "--limit wants a positive number of lines
// such as 100, got 0".
// An enumeration of the values accepted is its own example: give "".
func badFlag(name, what, example string, got any) error {
	if example == "" {
		return usagef("%s wants %s, got %v", dashed(name), what, got)
	}
	return usagef("%s wants %s such as %s, got %v", dashed(name), what, example, got)
}

// checkDir is the usage error for a flag naming a directory, such as
// mcp's --root and proxy's --cwd, when dir does not exist or is not a
// directory: checked before serving, so that the mistake shows at start
// and not in the first tool call.
func checkDir(name, dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usagef("%s %s: no such directory", dashed(name), dir)
	case err != nil:
		return usagef("%s %s: %v", dashed(name), dir, errors.Unwrap(err))
	case !fi.IsDir():
		return usagef("%s %s: not a directory", dashed(name), dir)
	}
	return nil
}
