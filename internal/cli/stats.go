package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/store"
)

func init() {
	register(commandInfo{name: "stats", order: 75,
		usage:   "stats [--session ID] [--json]",
		summary: "show which database it is and what it holds: sessions, copies, logical and stored bytes, pending copies, compression, file size, free space, evictions, retention deletions and the last failed save",
		about: "Numbers are for the whole database unless --session names one session. Stored bytes are what the copies take\n" +
			"after compression; the quotas (--session-quota, --db-cap) count them. Free space is the database's free pages and\n" +
			"its file system's free bytes (SQLite, where the platform says); the last failed save says when, where and why.",
		examples: []example{
			{"how much the database holds and how well it compresses", "scrollback stats"},
			{"one session's numbers, as JSON", "scrollback stats --session s_... --json"},
		},
		make: func(io IO) command { return &statsCmd{base: base{io: io, onlyReads: true}} }})
}

// statsCmd is `scrollback stats`: the whole database's numbers, or one
// session's with --session. Unlike other commands, it does not fall back
// to $SCROLLBACK_SESSION or the default session: without --session it
// describes everything.
type statsCmd struct{ base }

// statsJSON is stats --json: store.Stats with the ratio spelled out.
type statsJSON struct {
	// Database names the database, as the text's first line does (a
	// PostgreSQL URL without its password); absent when it cannot be told.
	Database string `json:"database,omitempty"`
	store.Stats
	CompressionRatio float64 `json:"compressionRatio"`
	// VacuumBlocked says why PostgreSQL's background VACUUM cannot run
	// (see postgres.DB.VacuumBlocked); absent when it can.
	VacuumBlocked string `json:"vacuumBlocked,omitempty"`
}

func (c *statsCmd) Run(ctx context.Context, args []string) error {
	fs := c.flags("stats", false, true)
	fs.StringVar(&c.session, "session", "", "show one session `ID` only (default: the whole database)")
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("stats takes no arguments, got %q", pos)
	}
	st, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	h, ok := st.(store.Housekeeper)
	if !ok {
		return errors.New("this database keeps no statistics")
	}
	s, err := h.Stats(ctx, c.session)
	if err != nil {
		if errors.Is(err, store.ErrSessionNotFound) {
			// The not_found kind, as every other command gives it for a
			// session that is not there.
			// (The CLI adds how to list them.)
			return &scrollback.Error{Op: "stats", Err: scrollback.ErrNoSession, Msg: fmt.Sprintf("no session %q", c.session)}
		}
		return err
	}
	var vacuum string
	if v, ok := st.(interface{ VacuumBlocked() string }); ok {
		vacuum = v.VacuumBlocked()
	}
	var database string
	if target, err := c.dbTarget(); err == nil {
		database = shownTarget(target)
	}
	if c.json {
		return printJSON(c.io.Stdout, statsJSON{database, s, s.CompressionRatio(), vacuum})
	}
	limit := func(n int64) string {
		if n == 0 {
			return "unbounded"
		}
		return FormatSize(n)
	}
	tw := tabwriter.NewWriter(c.io.Stdout, 0, 4, 2, ' ', 0)
	if database != "" {
		fmt.Fprintf(tw, "database\t%s\n", database)
	}
	if s.Session != "" {
		fmt.Fprintf(tw, "session\t%s\n", s.Session)
	} else {
		fmt.Fprintf(tw, "sessions\t%d\n", s.Sessions)
	}
	fmt.Fprintf(tw, "copies\t%d\n", s.Copies)
	fmt.Fprintf(tw, "logical bytes\t%d (%s)\n", s.LogicalBytes, FormatSize(s.LogicalBytes))
	fmt.Fprintf(tw, "stored bytes\t%d (%s)\n", s.StoredBytes, FormatSize(s.StoredBytes))
	if s.PendingCopies > 0 {
		// Being saved by a running command, or left by a process killed
		// mid-save: space the database holds that no copy listed takes.
		fmt.Fprintf(tw, "pending copies\t%d (%s stored): being saved, or left by a process that died mid-save (deleted %s after its last write)\n",
			s.PendingCopies, FormatSize(s.PendingStoredBytes), formatPeriod(store.StalePending))
	}
	fmt.Fprintf(tw, "compression\t%.2fx\n", s.CompressionRatio())
	fmt.Fprintf(tw, "database size\t%d (%s)\n", s.FileBytes, FormatSize(s.FileBytes))
	if s.FreeBytes != nil {
		fmt.Fprintf(tw, "free in database\t%d (%s)\n", *s.FreeBytes, FormatSize(*s.FreeBytes))
	}
	if s.DiskFreeBytes != nil {
		fmt.Fprintf(tw, "free on disk\t%d (%s)\n", *s.DiskFreeBytes, FormatSize(*s.DiskFreeBytes))
	}
	fmt.Fprintf(tw, "evictions\t%d\n", s.Evictions)
	if s.Session == "" {
		fmt.Fprintf(tw, "retention deletions\t%d\n", s.RetentionDeletions)
	}
	fmt.Fprintf(tw, "session quota\t%s\n", limit(s.Limits.SessionQuota))
	fmt.Fprintf(tw, "database cap\t%s\n", limit(s.Limits.DBCap))
	if f := s.LastSaveFailure; f != nil {
		fmt.Fprintf(tw, "last save failure\t%s in session %s: %s\n", f.At.UTC().Format("2006-01-02 15:04:05 MST"), f.Session, f.Error)
	} else {
		fmt.Fprintf(tw, "last save failure\tnone\n")
	}
	if vacuum != "" {
		fmt.Fprintf(tw, "background VACUUM\tcannot run: %s\n", vacuum)
	}
	return tw.Flush()
}

// shownTarget is the database as stats names it: a path as it is, a
// postgres:// URL without its password.
func shownTarget(target string) string {
	if !strings.HasPrefix(target, "postgres://") && !strings.HasPrefix(target, "postgresql://") {
		return target
	}
	u, err := url.Parse(target)
	if err != nil {
		return "a PostgreSQL database (its URL does not parse)"
	}
	return u.Redacted()
}
