// Package cli is the scrollback command line: one file per subcommand, each
// a small struct whose Run method parses its flags with the standard flag
// package and calls the engine. Main is what cmd/scrollback runs; tests run
// it in process through testscript.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/codemode"
	"github.com/scrollback-dev/scrollback/present"
)

// IO is where a command reads and writes, and the environment it sees.
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

// Stdio returns the process's own standard streams and environment.
func Stdio() IO {
	return IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
}

type command interface {
	Run(ctx context.Context, args []string) error
}

// commandInfo is one subcommand: what `scrollback help` lists and what its
// help says. The flags come from the command's own flag set, so adding a
// command is one register call with these fields filled in.
type commandInfo struct {
	name, usage, summary string
	about                string    // optional: a paragraph more, after the usage line
	examples             []example // one or two, shown last in the help
	order                int       // place in the help listing
	passthrough          bool      // its arguments, --help too, go to another program: help shows no flags
	make                 func(io IO) command
}

// help is not in commands (Main answers it before any command runs), but
// help lists it with them.
const (
	helpUsage   = "help [COMMAND]"
	helpSummary = "say what scrollback does and list its commands, or say what one command does, its flags and examples"
)

// commands holds every subcommand; each file adds its own with register.
var commands []commandInfo

// register adds a subcommand. It is called from init functions, one per
// subcommand file, so adding a subcommand touches no other file.
func register(c commandInfo) {
	commands = append(commands, c)
	sort.SliceStable(commands, func(i, j int) bool { return commands[i].order < commands[j].order })
}

// lookup returns the subcommand called name.
func lookup(name string) (commandInfo, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return commandInfo{}, false
}

// exitError carries an exit code out of a command without printing
// anything more (run exits with its command's code).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// statusError is a failure printed as any other but ending with its own
// exit code: run's failures before its command starts exit 125, as
// timeout(1) and env(1) do, so that a script can tell them from the
// command's own exit 1.
type statusError struct {
	code int
	err  error
}

func (e statusError) Error() string { return e.err.Error() }
func (e statusError) Unwrap() error { return e.err }

// usageError is a mistake in how scrollback itself was called: exit 2.
// Its kind, for --json, is "argument" unless kind names another: a
// negative --offset is out of range, "offset", as the tools say it.
type usageError struct{ msg, kind string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{msg: fmt.Sprintf(format, args...)} }

// Main runs the command line and returns the process exit code: the run
// command's own exit code for `run`, 2 for a usage mistake (an unknown
// command or flag, a bad flag value, help for a command that does not
// exist), 1 for any other error (printed to stderr as "scrollback: ...").
func Main(ctx context.Context, args []string, io IO) int {
	if len(args) > 0 && args[0] == codemode.WorkerArg {
		// Not a command: a Code Mode worker, started by --code-workers.
		return codemode.ServeWorker()
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		// help's own -h or --help is the usage, as any command's is.
		if len(args) > 1 && args[1] != "help" && args[1] != "-h" && args[1] != "-help" && args[1] != "--help" {
			c, ok := lookup(args[1])
			if !ok {
				unknownCommand(io.Stderr, "scrollback help", args[1])
				return 2
			}
			printHelp(io.Stdout, c, helpFlags(ctx, c, io))
			return 0
		}
		printUsage(io.Stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" {
		args = append([]string{"version"}, args[1:]...)
	}
	if c, ok := lookup(args[0]); ok {
		cmd := c.make(io)
		err := cmd.Run(ctx, args[1:])
		var ee exitError
		var ue usageError
		var hr helpRequest
		switch {
		case err == nil:
			return 0
		case errors.As(err, &ee):
			return ee.code
		case errors.As(err, &hr):
			printHelp(io.Stdout, c, hr.fs)
			return 0
		case errors.As(err, &ue):
			if wantsJSON(cmd) {
				kind := ue.kind
				if kind == "" {
					kind = scrollback.KindArgument
				}
				printJSONError(io.Stdout, kind, ue.msg+"; usage: scrollback "+c.usage)
				return 2
			}
			fmt.Fprintf(io.Stderr, "scrollback %s: %s\nusage: scrollback %s\n", c.name, ue.msg, c.usage)
			return 2
		default:
			code := 1
			var se statusError
			if errors.As(err, &se) {
				code = se.code
			}
			if wantsJSON(cmd) {
				printJSONError(io.Stdout, scrollback.ErrorKind(err), errorText(c.name, err))
				return code
			}
			fmt.Fprintf(io.Stderr, "scrollback %s: %s\n", c.name, errorText(c.name, err))
			return code
		}
	}
	if strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		flagBeforeCommand(io.Stderr, args)
		return 2
	}
	unknownCommand(io.Stderr, "scrollback", args[0])
	return 2
}

// flagBeforeCommand says that a flag given before any command (scrollback
// --db PATH ls, as git takes its own) goes after the command, where each
// command takes its flags, naming the command when one follows: it was
// "unknown command "--db"".
func flagBeforeCommand(w io.Writer, args []string) {
	flag, _, _ := strings.Cut(args[0], "=")
	example := "scrollback COMMAND " + strings.Join(args, " ")
	for i, a := range args {
		if a == "--" {
			break
		}
		if _, ok := lookup(a); ok {
			// Right after the command's name, before any "--" of run's.
			example = "scrollback " + strings.Join(append(append([]string{a}, args[:i]...), args[i+1:]...), " ")
			break
		}
	}
	fmt.Fprintf(w, "scrollback: %s before the command: a command takes its flags after its name, as in: %s\nRun 'scrollback help' for the commands, 'scrollback help COMMAND' for one's flags.\n", flag, example)
}

// unknownCommand says that name is no command, suggests the nearest when it
// looks like a typo, and lists them all.
func unknownCommand(w io.Writer, who, name string) {
	names := commandNames()
	msg := fmt.Sprintf("%s: unknown command %q", who, name)
	if near := nearest(name, names); near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", near)
	}
	fmt.Fprintf(w, "%s\nThe commands are: %s.\nRun 'scrollback help' for what each does, 'scrollback help COMMAND' for one.\n",
		msg, strings.Join(names, ", "))
}

// commandNames lists every command in help's order, help last.
func commandNames() []string {
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	return append(names, "help")
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `scrollback keeps the output of commands and tools that is too large to show at
once, and pages through it by UTF-8 byte offset without running anything again.

Usage:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  scrollback %s\n        %s\n", c.usage, c.summary)
	}
	fmt.Fprintf(w, "  scrollback %s\n        %s\n", helpUsage, helpSummary)
	fmt.Fprint(w, `
Every command that opens the database takes --db PATH (else $SCROLLBACK_DB, else
$XDG_STATE_HOME/scrollback/scrollback.db, else the platform's default:
~/.local/state/scrollback/scrollback.db on Linux and macOS,
%LocalAppData%\scrollback\scrollback.db on Windows)
and, where it uses a session, --session ID (else $SCROLLBACK_SESSION, else the
database's default session, created on first use). With --json, a failure is
printed on stdout as {"error": {"kind": ..., "message": ...}} (kinds: not_found,
evicted, offset, argument, sensitive, unavailable), with the same exit status.

Run 'scrollback help COMMAND' (or 'scrollback COMMAND --help') for what one
command does, its flags and examples.
`)
}

// wantsJSON reports whether cmd was given --json: then its error goes to
// stdout as JSON instead of to stderr as text.
func wantsJSON(cmd command) bool {
	j, ok := cmd.(interface{ wantsJSON() bool })
	return ok && j.wantsJSON()
}

// printJSONError prints a failure as a command given --json does, on
// stdout: {"error": {"kind": KIND, "message": MESSAGE}} (present.Failure),
// the kind one of the contract's (scrollback.ErrorKind).
func printJSONError(w io.Writer, kind, msg string) {
	printJSON(w, present.Failure(kind, msg)) // nowhere left to report a failure to write
}

// errorText is err for a person at a terminal: an engine error without the
// tool name the subcommand already stands for.
func errorText(name string, err error) string {
	var se *scrollback.Error
	if errors.As(err, &se) && se.Msg != "" {
		hint := se.Hint
		switch {
		case errors.Is(err, scrollback.ErrNoOutput) && hint == present.NoCopyHint:
			hint = present.CLINoCopyHint // at a terminal, ls lists them
		case errors.Is(err, scrollback.ErrNoSession):
			if hint != "" {
				hint += "; "
			}
			hint += "list them with `scrollback session list`"
		}
		if hint != "" {
			return se.Msg + "; " + hint
		}
		return se.Msg
	}
	return strings.TrimPrefix(err.Error(), name+": ")
}
