package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/scrollback-dev/scrollback/store"
)

// storageFlags are the bounds on what the database keeps, shared by every
// command that opens it: the quotas apply to the saves a command makes,
// retention to gc and to the long-running servers.
type storageFlags struct {
	sessionQuota, dbCap string // as given; parsed by limits
	retention           string
}

func (f *storageFlags) addLimitFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.sessionQuota, "session-quota", "", "evict a session's least recently read copies past `SIZE` stored, e.g. 512MiB; 0 = unbounded (default $SCROLLBACK_SESSION_QUOTA, else 512MiB)")
	fs.StringVar(&f.dbCap, "db-cap", "", "evict any session's least recently read copies past `SIZE` stored in the database; 0 = unbounded (default $SCROLLBACK_DB_CAP, else 4GiB)")
}

func (f *storageFlags) addRetentionFlag(fs *flag.FlagSet) {
	fs.StringVar(&f.retention, "retention", "", "delete sessions unused for longer than `DUR`, e.g. 30d or 36h; 0 = keep them (default $SCROLLBACK_RETENTION, else 30d)")
}

// limits resolves the quotas: each flag, else its environment variable,
// else the default. A value that is not a size is a usage error.
func (f *storageFlags) limits(getenv func(string) string) (store.Limits, error) {
	l := store.DefaultLimits()
	for _, s := range []struct {
		flag, env, val string
		dst            *int64
	}{
		{"--session-quota", "SCROLLBACK_SESSION_QUOTA", f.sessionQuota, &l.SessionQuota},
		{"--db-cap", "SCROLLBACK_DB_CAP", f.dbCap, &l.DBCap},
	} {
		name, v := s.flag, s.val
		if v == "" {
			name, v = "$"+s.env, getenv(s.env)
		}
		if v == "" {
			continue
		}
		n, err := ParseSize(v)
		if err != nil {
			return store.Limits{}, usagef("%s: %v", name, err)
		}
		*s.dst = n
	}
	return l, nil
}

// retentionPeriod resolves --retention, else $SCROLLBACK_RETENTION, else
// store.DefaultRetention; 0 means keep sessions however long unused.
func (f *storageFlags) retentionPeriod(getenv func(string) string) (time.Duration, error) {
	name, v := "--retention", f.retention
	if v == "" {
		name, v = "$SCROLLBACK_RETENTION", getenv("SCROLLBACK_RETENTION")
	}
	if v == "" {
		return store.DefaultRetention, nil
	}
	d, err := ParseRetention(v)
	if err != nil {
		return 0, usagef("%s: %v", name, err)
	}
	return d, nil
}

// sizeUnits are the suffixes ParseSize accepts, longest first so that
// "MiB" is not read as "B".
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// ParseSize reads a byte count for a quota: a whole number of bytes, or
// one followed by a unit (B, KiB, MiB, GiB, TiB; KB, MB, GB, TB in powers
// of ten; K, M, G, T as their binary forms), e.g. 512MiB, 4GiB, 0. Zero
// means unbounded. Negative, fractional or unknown forms are errors that
// name the accepted ones.
func ParseSize(s string) (int64, error) {
	bad := func() (int64, error) {
		return 0, fmt.Errorf("%q is not a size: want a whole number of bytes with an optional unit (B, KiB, MiB, GiB, TiB; KB, MB, GB, TB in powers of ten), such as 512MiB, 4GiB or 0 (unbounded)", s)
	}
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range sizeUnits {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	if num == "" || strings.ContainsAny(num, "+-") {
		return bad()
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return bad()
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is too large a size", s)
	}
	return n * mult, nil
}

// ParseRetention reads a retention period: a number of days ("30d"), or
// a Go duration ("36h", "90m"), or 0 for no retention limit.
func ParseRetention(s string) (time.Duration, error) {
	bad := func() (time.Duration, error) {
		return 0, fmt.Errorf("%q is not a period: want days such as 30d, a duration such as 36h, or 0 (keep sessions)", s)
	}
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 64)
		if err != nil || n < 0 || strings.HasPrefix(days, "+") || n > math.MaxInt64/int64(24*time.Hour) {
			return bad()
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return bad()
	}
	return d, nil
}

// FormatSize prints a byte count in the largest binary unit that keeps it
// readable: 512MiB, 1.5GiB, 900B.
func FormatSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f, i := float64(n), 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 || f == math.Trunc(f) {
		return strconv.FormatFloat(f, 'f', 0, 64) + units[i]
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + units[i]
}

// formatPeriod prints a retention period in days when it is whole days.
func formatPeriod(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	return d.String()
}

// housekeepingInterval is how often a long-running server applies
// retention: at start, then at most once an hour. A variable for tests.
var housekeepingInterval = time.Hour

// startRetention deletes sessions idle for longer than period, in the
// background, at once and then every housekeepingInterval, until the
// returned stop is called (stop waits for a pass under way, so call it
// before closing the store). It never runs on a call's path; a failure is
// logged and retried at the next interval. Nothing runs when the store has
// no housekeeping, nor when period is 0 and live is nil.
//
// The sessions live returns (those the server's connected clients hold)
// are never deleted under them: they are marked used before each pass,
// and also every half period when that is shorter than the interval, so
// that another instance's pass on a shared database spares them too.
// With period 0 (keep sessions) no pass runs, but they are still marked
// every interval: `scrollback gc`, or another instance with a period of
// its own, would otherwise delete them however recently their client
// connected.
func startRetention(ctx context.Context, st store.Store, period time.Duration, say func(slog.Level, string), live func() []string) (stop func()) {
	h, ok := st.(store.Housekeeper)
	if !ok || period <= 0 && live == nil {
		return func() {}
	}
	// Mark live sessions used every tick, apply retention every
	// passEvery ticks (once an hour); never, for period 0.
	tick, passEvery := housekeepingInterval, 1
	if period > 0 {
		tick = min(housekeepingInterval, period/2)
		tick = max(tick, time.Second) // a period of a second or less: tick each second
		passEvery = int((housekeepingInterval + tick - 1) / tick)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(tick)
		defer t.Stop()
		for i := 0; ; i++ {
			var kept error
			if live != nil {
				kept = h.MarkUsed(ctx, live())
				if kept != nil && ctx.Err() == nil {
					say(slog.LevelWarn, fmt.Sprintf("scrollback: retention: marking the sessions of connected clients used: %v", kept))
				}
			}
			// A pass runs only when the live sessions were marked: else
			// it could delete one under its client.
			if period > 0 && i%passEvery == 0 && kept == nil {
				gone, err := h.DeleteIdle(ctx, time.Now().Add(-period))
				switch {
				case err != nil && ctx.Err() == nil:
					say(slog.LevelWarn, fmt.Sprintf("scrollback: retention: %v (retrying in %s)", err, housekeepingInterval))
				case gone.Sessions > 0:
					say(slog.LevelInfo, "scrollback: retention: deleted "+describeIdle(gone, period))
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// cliRetentionEvery is how often, at most, the CLI's commands apply
// retention to a database themselves (retainAfter): once a day between
// all the processes that share it, or once per retention period when that
// is shorter.
const cliRetentionEvery = 24 * time.Hour

// cliRetentionTimeout bounds such a pass, so that it does not hold up the
// command's exit noticeably: a pass that runs out of time is rolled back
// and tried again at the next interval (`scrollback gc` applies retention
// without a bound).
const cliRetentionTimeout = 2 * time.Second

// retainAfter is retention for whoever runs only the CLI, whom no
// server's hourly pass serves: after a command's own work, when a pass is
// due (store.RetentionClaimer: at most once per cliRetentionEvery per
// database), it deletes the sessions unused for longer than period with
// their copies, as gc does, but first marks the sessions in spare used
// (the one the command used: it is not idle). Nothing is done for period
// 0, for a store without retention, or once ctx has ended.
//
// Its errors are for the caller to ignore: the command's work is done,
// and a pass that failed (a database locked, read-only, out of time) is
// tried again at the next interval; `scrollback gc` says why it fails.
func retainAfter(ctx context.Context, st store.Store, period time.Duration, spare []string) (store.Idle, error) {
	h, hok := st.(store.Housekeeper)
	c, cok := st.(store.RetentionClaimer)
	if period <= 0 || !hok || !cok || ctx.Err() != nil {
		return store.Idle{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, cliRetentionTimeout)
	defer cancel()
	now := time.Now()
	if due, err := c.ClaimRetention(ctx, now, min(cliRetentionEvery, period)); err != nil || !due {
		return store.Idle{}, err
	}
	// A pass runs only when the command's session was marked: else it
	// could delete the session the command just used.
	if err := h.MarkUsed(ctx, spare); err != nil {
		return store.Idle{}, err
	}
	return h.DeleteIdle(ctx, now.Add(-period))
}
