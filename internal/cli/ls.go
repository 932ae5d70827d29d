package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/scrollback-dev/scrollback/present"
)

func init() {
	register(commandInfo{name: "ls", order: 50,
		usage:   "ls [--session ID] [--json]",
		summary: "list the retained copies in a session",
		examples: []example{
			{"list the retained copies of the default session", "scrollback ls"},
			{"list another session's copies as JSON", "scrollback ls --session s_3nd6tyc2hbbd5g2zzxexqkzwtu --json"},
		},
		make: func(io IO) command { return &lsCmd{base: base{io: io, onlyReads: true}} }})
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
		list := make([]lsEntry, len(copies))
		for i, cp := range copies {
			list[i] = lsEntry{OutputID: cp.ID, Tool: cp.Tool, Source: cp.Source, TotalBytes: cp.TotalBytes,
				Lines: cp.Lines, Complete: cp.Complete, CreatedAt: cp.CreatedAt}
			if cp.OmittedBytes > 0 {
				list[i].Gap = &lsGap{Bytes: cp.OmittedBytes, Lines: cp.OmittedLines}
			}
		}
		return printJSON(c.io.Stdout, list)
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
				complete = fmt.Sprintf("no (gap: %d bytes, %s)", cp.OmittedBytes, present.GapLines(cp.OmittedLines))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", cp.ID, cp.Tool, cp.TotalBytes, cp.Lines, complete,
			cp.CreatedAt.Local().Format(time.DateTime), oneLine(cp.Source, 60))
	}
	return tw.Flush()
}

// lsEntry is one copy in `ls --json`, named as the tools name it: the id
// is an output_id, the length totalBytes.
type lsEntry struct {
	OutputID   string    `json:"output_id"`
	Tool       string    `json:"tool"`
	Source     string    `json:"source"`
	TotalBytes int64     `json:"totalBytes"`
	Lines      int64     `json:"lines"`
	Complete   bool      `json:"complete"`
	Gap        *lsGap    `json:"gap,omitempty"` // what the copy dropped past the cap
	CreatedAt  time.Time `json:"created_at"`
}

type lsGap struct {
	Bytes int64 `json:"bytes"`
	Lines int64 `json:"lines"`
}

// oneLine shortens s to one line of at most n runes for a table.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
