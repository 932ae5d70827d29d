package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// example is one example in a command's help: what it does and the command
// line that does it.
type example struct{ what, line string }

// helpRequest is what parse returns for -h or --help: the command's flag
// set, from which Main prints the command's help.
type helpRequest struct{ fs *flag.FlagSet }

func (h helpRequest) Error() string { return "help requested" }

func (h helpRequest) Is(err error) bool { return err == flag.ErrHelp }

// printHelp writes a command's help: what it does, its usage line, its
// flags with their units and defaults as each flag's usage states them, and
// its examples. It is the one place help is rendered, for `scrollback
// COMMAND --help` and `scrollback help COMMAND` alike.
func printHelp(w io.Writer, c commandInfo, fs *flag.FlagSet) {
	fmt.Fprintf(w, "scrollback %s: %s.\n\nUsage:\n  scrollback %s\n", c.name, c.summary, c.usage)
	if c.about != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.about))
	}
	if fs != nil {
		fmt.Fprint(w, "\nFlags:\n")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fs.VisitAll(func(f *flag.Flag) {
			arg, usage := flag.UnquoteUsage(f)
			dashes := "--"
			if len(f.Name) == 1 {
				dashes = "-"
			}
			if arg != "" && !isBoolFlag(f) {
				arg = " " + arg
			} else {
				arg = ""
			}
			fmt.Fprintf(tw, "  %s%s%s\t%s\n", dashes, f.Name, arg, usage)
		})
		tw.Flush()
	}
	if len(c.examples) > 0 {
		fmt.Fprint(w, "\nExamples:\n")
		for i, e := range c.examples {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "  # %s\n  %s\n", e.what, e.line)
		}
	}
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// helpFlags returns the flag set command c defines, by asking it for its
// help: every command parses its flags before doing anything else, so
// --help reaches parse and comes back as a helpRequest.
func helpFlags(ctx context.Context, c commandInfo, stdio IO) *flag.FlagSet {
	if c.passthrough {
		return nil
	}
	var h helpRequest
	if err := c.make(stdio).Run(ctx, []string{"--help"}); errors.As(err, &h) {
		return h.fs
	}
	return nil
}
