package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/store"
)

func init() {
	register(commandInfo{name: "session", order: 70,
		usage:   "session new | list | fork ID | delete ID   [--json]",
		summary: "create, list, fork and delete sessions",
		examples: []example{
			{"start a new session and use it in this shell", "export SCROLLBACK_SESSION=$(scrollback session new)"},
			{"list the sessions", "scrollback session list"},
		},
		make: func(io IO) command { return &sessionCmd{base: base{io: io}} }})
}

// sessionCmd is `scrollback session new | list | fork ID | delete ID`.
type sessionCmd struct{ base }

func (c *sessionCmd) Run(ctx context.Context, args []string) error {
	c.flags("session", false, true)
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("want one of: new, list, fork ID, delete ID")
	}
	verb, rest := pos[0], pos[1:]
	want := map[string]int{"new": 0, "list": 0, "ls": 0, "fork": 1, "delete": 1, "rm": 1}
	n, ok := want[verb]
	if !ok {
		return usagef("unknown session command %q: want one of new, list, fork ID, delete ID", verb)
	}
	if len(rest) != n {
		return usagef("session %s takes %d argument(s), got %d", verb, n, len(rest))
	}
	c.onlyReads = verb == "list" || verb == "ls"
	eng, st, err := c.engine(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	owner := scrollback.LocalOwner
	switch verb {
	case "new":
		s, err := eng.NewSession(ctx, owner)
		if err != nil {
			return err
		}
		return c.printSession(s.Info())
	case "fork":
		s, err := eng.ForkSession(ctx, owner, rest[0])
		if err != nil {
			return err
		}
		return c.printSession(s.Info())
	case "delete", "rm":
		if err := eng.DeleteSession(ctx, owner, rest[0]); err != nil {
			return err
		}
		if c.json {
			return printJSON(c.io.Stdout, map[string]string{"deleted": rest[0]})
		}
		fmt.Fprintf(c.io.Stderr, "deleted session %s and its retained copies\n", rest[0])
		return nil
	default: // list
		ss, err := eng.ListSessions(ctx, owner)
		if err != nil {
			return err
		}
		if c.json {
			if ss == nil {
				ss = []store.Session{}
			}
			return printJSON(c.io.Stdout, ss)
		}
		tw := tabwriter.NewWriter(c.io.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SESSION\tCREATED\tLAST USED\tCOPIES\tBYTES\tFORKED FROM")
		for _, s := range ss {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", s.ID, s.CreatedAt.Local().Format(time.DateTime),
				s.LastUsedAt.Local().Format(time.DateTime), s.Copies, s.Bytes, s.Parent)
		}
		return tw.Flush()
	}
}

// printSession prints a new session: only its id (so that
// S=$(scrollback session new) works), or its JSON.
func (c *sessionCmd) printSession(s store.Session) error {
	if c.json {
		return printJSON(c.io.Stdout, s)
	}
	_, err := fmt.Fprintln(c.io.Stdout, s.ID)
	return err
}
