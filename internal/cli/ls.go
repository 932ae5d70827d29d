package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/scrollback-dev/scrollback/store"
)

func init() {
	register(commandInfo{name: "ls", order: 50,
		usage:   "ls [--session ID] [--json]",
		summary: "list the retained copies in a session",
		make:    func(io IO) command { return &lsCmd{base: base{io: io}} }})
}

// lsCmd is `scrollback ls`: the retained copies in a session.
type lsCmd struct{ base }

func (c *lsCmd) Run(ctx context.Context, args []string) error {
	c.flags("ls", true, true)
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("ls takes no arguments, got %q", pos)
	}
	sess, st, err := c.useSession(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	copies, err := sess.Copies(ctx)
	if err != nil {
		return err
	}
	if c.json {
		if copies == nil {
			copies = []store.CopyInfo{}
		}
		return printJSON(c.io.Stdout, copies)
	}
	if len(copies) == 0 {
		fmt.Fprintf(c.io.Stderr, "no retained copies in session %s\n", sess.ID())
		return nil
	}
	tw := tabwriter.NewWriter(c.io.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "OUTPUT_ID\tTOOL\tBYTES\tLINES\tCOMPLETE\tCREATED\tSOURCE")
	for _, cp := range copies {
		complete := "yes"
		if !cp.Complete {
			complete = "no"
			if cp.OmittedBytes > 0 {
				complete = fmt.Sprintf("no (gap: %d bytes, %d lines)", cp.OmittedBytes, cp.OmittedLines)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", cp.ID, cp.Tool, cp.TotalBytes, cp.Lines, complete,
			cp.CreatedAt.Local().Format(time.DateTime), oneLine(cp.Source, 60))
	}
	return tw.Flush()
}

// oneLine shortens s to one line of at most n runes for a table.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
