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
		usage:   "gc [--retention DUR] [--dry-run] [--json]",
		summary: "delete sessions unused for longer than the retention period (default 30d), with their copies, now",
		about: "A session is used when a copy is saved into it or read from it. scrollback mcp and proxy do the same\n" +
			"in the background, at most once an hour, and scrollback run after its command, at most once a day.\n" +
			"--dry-run says what would be deleted (sessions, copies, bytes) and deletes nothing.",
		examples: []example{
			{"delete sessions unused for 30 days", "scrollback gc"},
			{"see what keeping a week would delete, without deleting it", "scrollback gc --retention 7d --dry-run"},
		},
		make: func(io IO) command { return &gcCmd{base: base{io: io}} }})
}

// gcCmd is `scrollback gc`: retention applied at once, as the long-running
// servers apply it every hour.
type gcCmd struct {
	base
	dryRun bool
}

func (c *gcCmd) Run(ctx context.Context, args []string) error {
	fs := c.flags("gc", false, true)
	c.addRetentionFlag(fs)
	fs.BoolVar(&c.dryRun, "dry-run", false, "say what would be deleted (sessions, copies, bytes) and delete nothing (default: delete)")
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
	if c.dryRun {
		return c.report(ctx, h, period)
	}
	var gone store.Idle
	if period > 0 {
		if gone, err = h.DeleteIdle(ctx, time.Now().Add(-period)); err != nil {
			return err
		}
	}
	if c.json {
		return printJSON(c.io.Stdout, gcDone{DeletedSessions: gone.Sessions, Deleted: gone, Retention: formatPeriod(period)})
	}
	switch {
	case period == 0:
		fmt.Fprintln(c.io.Stderr, "retention is 0: sessions are kept however long unused; nothing deleted")
	default:
		fmt.Fprintf(c.io.Stderr, "deleted %s\n", describeIdle(gone, period))
	}
	return nil
}

// gcDone is what `gc --json` prints: what retention deleted, and the
// period it applied. DeletedSessions repeats Deleted.Sessions, as gc
// printed it before it said the rest.
type gcDone struct {
	DeletedSessions int64      `json:"deletedSessions"`
	Deleted         store.Idle `json:"deleted"`
	Retention       string     `json:"retention"`
}

// describeIdle says what retention with period deletes or would delete:
// "2 sessions unused for more than 30d, with 3 copies of 1.2MiB (300KiB
// stored)".
func describeIdle(idle store.Idle, period time.Duration) string {
	return fmt.Sprintf("%s unused for more than %s, with %s of %s (%s stored)",
		count(idle.Sessions, "session", "sessions"), formatPeriod(period), count(idle.Copies, "copy", "copies"),
		FormatSize(idle.LogicalBytes), FormatSize(idle.StoredBytes))
}

// gcDryRun is what `gc --dry-run --json` prints: what retention would
// delete now, and the period it applies.
type gcDryRun struct {
	DryRun      bool       `json:"dryRun"`
	WouldDelete store.Idle `json:"wouldDelete"`
	Retention   string     `json:"retention"`
}

// report says what gc would delete, and deletes nothing.
func (c *gcCmd) report(ctx context.Context, h store.Housekeeper, period time.Duration) error {
	var idle store.Idle
	if period > 0 {
		var err error
		if idle, err = h.CountIdle(ctx, time.Now().Add(-period)); err != nil {
			return err
		}
	}
	if c.json {
		return printJSON(c.io.Stdout, gcDryRun{DryRun: true, WouldDelete: idle, Retention: formatPeriod(period)})
	}
	if period == 0 {
		fmt.Fprintln(c.io.Stdout, "retention is 0: sessions are kept however long unused; gc would delete nothing")
		return nil
	}
	fmt.Fprintf(c.io.Stdout, "gc would delete %s; dry run: nothing deleted\n", describeIdle(idle, period))
	return nil
}

// count says n things: "1 copy", "2 copies".
func count(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
