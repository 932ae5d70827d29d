package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/scrollback-dev/scrollback/store"
)

func init() {
	register(commandInfo{name: "gc", order: 76,
		usage:   "gc [--retention DUR] [--json]",
		summary: "delete sessions unused for longer than the retention period (default 30d), with their copies, now",
		about: "A session is used when a copy is saved into it or read from it. scrollback mcp and proxy do the same\n" +
			"in the background, at most once an hour.",
		examples: []example{
			{"delete sessions unused for 30 days", "scrollback gc"},
			{"keep a week", "scrollback gc --retention 7d"},
		},
		make: func(io IO) command { return &gcCmd{base: base{io: io}} }})
}

// gcCmd is `scrollback gc`: retention applied at once, as the long-running
// servers apply it every hour.
type gcCmd struct{ base }

func (c *gcCmd) Run(ctx context.Context, args []string) error {
	fs := c.flags("gc", false, true)
	c.addRetentionFlag(fs)
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("gc takes no arguments, got %q", pos)
	}
	period, err := c.retentionPeriod(c.io.Getenv)
	if err != nil {
		return err
	}
	st, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	h, ok := st.(store.Housekeeper)
	if !ok {
		return errors.New("this database has no retention")
	}
	n := 0
	if period > 0 {
		if n, err = h.DeleteIdle(ctx, time.Now().Add(-period)); err != nil {
			return err
		}
	}
	if c.json {
		return printJSON(c.io.Stdout, map[string]any{"deletedSessions": n, "retention": formatPeriod(period)})
	}
	switch {
	case period == 0:
		fmt.Fprintln(c.io.Stderr, "retention is 0: sessions are kept however long unused; nothing deleted")
	default:
		fmt.Fprintf(c.io.Stderr, "deleted %d session(s) unused for more than %s, with their copies\n", n, formatPeriod(period))
	}
	return nil
}
