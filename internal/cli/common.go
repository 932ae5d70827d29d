package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/codemode"
	"github.com/scrollback-dev/scrollback/filepager"
	"github.com/scrollback-dev/scrollback/present"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// base holds what most subcommands share: where the database is, which
// session to use, and whether to print JSON.
type base struct {
	io      IO
	fs      *flag.FlagSet
	db      string
	session string
	json    bool
	storageFlags
	// codeWorkers runs run_code's scripts (nil: in this process).
	codeWorkers *codemode.Pool
	// onlyReads: the command writes nothing of its own (read, grep, ls,
	// stats, ...), so a SQLite database it cannot write (a read-only
	// file, directory or mount) is opened read-only instead of refused;
	// a write it would need (a default session not yet made) fails
	// saying the database is read-only.
	onlyReads bool
}

// flags makes the subcommand's flag set with the shared flags on it.
func (b *base) flags(name string, session, jsonFlag bool) *flag.FlagSet {
	// parse turns a flag error into a usage error and --help into a
	// helpRequest, and Main prints either: the flag package prints nothing.
	fs := newFlagSet(name)
	fs.StringVar(&b.db, "db", "", "the database: a SQLite file `PATH` or a postgres:// URL (default $SCROLLBACK_DB, else $XDG_STATE_HOME/scrollback/scrollback.db, else the platform's state directory: see scrollback help)")
	b.addLimitFlags(fs)
	if session {
		fs.StringVar(&b.session, "session", "", "use the session `ID` (default $SCROLLBACK_SESSION, else the database's default session)")
	}
	if jsonFlag {
		fs.BoolVar(&b.json, "json", false, "print the result as JSON, a failure as {\"error\": {\"kind\", \"message\"}} (default text)")
	}
	b.fs = fs
	return fs
}

// plainFlags makes the flag set of a subcommand that opens no database:
// --json only, so that --db, --session and the quota flags, which it
// would ignore, are refused as flags it does not know (unknownFlagText
// says why).
func (b *base) plainFlags(name string) *flag.FlagSet {
	fs := b.noDBFlags(name)
	fs.BoolVar(&b.json, "json", false, "print the result as JSON, a failure as {\"error\": {\"kind\", \"message\"}} (default text)")
	return fs
}

// noDBFlags makes an empty flag set, for a subcommand that opens no
// database and prints no JSON (wrap).
func (b *base) noDBFlags(name string) *flag.FlagSet {
	b.fs = newFlagSet(name)
	return b.fs
}

// isDBFlag says whether name is one of the flags that choose or bound the
// database (--db, --session, the quotas, --retention), which a subcommand
// that opens none refuses.
func isDBFlag(name string) bool {
	var b base
	fs := b.flags("", true, false)
	b.addRetentionFlag(fs)
	return fs.Lookup(name) != nil
}

// parse parses flags that may stand before, between or after the positional
// arguments (until a "--", after which everything is positional), and
// returns the positional arguments. A flag error is a usage error in our
// words (see flagError).
//
// A flag error stops parsing where it is, so a --json after it would not
// be seen: it is looked for in what is left, so that the error is still
// printed as JSON.
func (b *base) parse(args []string) ([]string, error) {
	var pos []string
	var bad *refused
	recordRefusals(b.fs, &bad)
	for {
		if err := b.fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, helpRequest{b.fs}
			}
			if b.fs.Lookup("json") != nil {
				b.json = b.json || jsonLater(args)
			}
			return nil, flagError(b.fs, args, err, bad, pos)
		}
		rest := b.fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// jsonLater reports whether the last --json in args (before any "--")
// turns it on: --json, -json or --json=true.
func jsonLater(args []string) bool {
	on := false
	for _, a := range args {
		if a == "--" {
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "json" {
			continue
		}
		on = true
		if hasVal {
			on, _ = strconv.ParseBool(val)
		}
	}
	return on
}

// DefaultDBPath returns the database path used when neither --db nor
// $SCROLLBACK_DB is given: $XDG_STATE_HOME/scrollback/scrollback.db when
// $XDG_STATE_HOME is set, else the platform's place for an application's
// state: ~/.local/state/scrollback/ on Linux, macOS and other Unix
// systems (on macOS, ~/Library/Application Support/scrollback/ when a
// database from an earlier release is there), %LocalAppData%\scrollback\
// on Windows.
func DefaultDBPath(getenv func(string) string) (string, error) {
	return defaultDBPath(runtime.GOOS, getenv, os.UserHomeDir, fileExists)
}

// fileExists says whether path names an existing file.
func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir()
}

// dbTarget resolves which database to use.
func (b *base) dbTarget() (string, error) {
	if b.db != "" {
		return b.db, nil
	}
	if v := b.io.Getenv("SCROLLBACK_DB"); v != "" {
		return v, nil
	}
	p, err := DefaultDBPath(b.io.Getenv)
	if err != nil {
		// Nothing the user gave is wrong: the store has no place, so it
		// cannot be reached (it was the argument kind).
		return "", unreachable{err}
	}
	return p, nil
}

// unreachable is an error that leaves the store out of reach: of the
// unavailable kind, its text unchanged.
type unreachable struct{ error }

func (u unreachable) Unwrap() error        { return u.error }
func (u unreachable) Is(target error) bool { return target == store.ErrUnavailable }

// openStore opens the store named by --db / $SCROLLBACK_DB / the default,
// with the quotas of --session-quota and --db-cap (or their environment
// variables) in force.
func (b *base) openStore(ctx context.Context) (store.Store, error) {
	return b.openStoreWith(ctx, sqlite.Options{})
}

// openStoreWith is openStore with the options a SQLite database is opened
// with.
func (b *base) openStoreWith(ctx context.Context, o sqlite.Options) (store.Store, error) {
	limits, err := b.limits(b.io.Getenv)
	if err != nil {
		return nil, err
	}
	target, err := b.dbTarget()
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, target, o)
	if err != nil && b.onlyReads && !o.ReadOnly && errors.Is(err, sqlite.ErrReadOnly) {
		if _, serr := os.Stat(target); serr == nil {
			o.ReadOnly = true
			st, err = openStore(ctx, target, o)
		}
	}
	if err != nil {
		return nil, err
	}
	if h, ok := st.(store.Housekeeper); ok {
		h.SetLimits(limits)
	}
	// PostgreSQL's background VACUUM (after evictions and deletions) never
	// fails a call; its failures are said here.
	if v, ok := st.(interface{ SetVacuumErrorLog(func(error)) }); ok {
		stderr := b.io.Stderr
		v.SetVacuumErrorLog(func(err error) {
			fmt.Fprintf(stderr, "scrollback: background VACUUM of the chunks failed (their freed space waits for autovacuum): %v\n", err)
		})
	}
	return st, nil
}

// OpenStore opens a store by its location: a postgres:// or postgresql://
// URL for PostgreSQL, anything else a SQLite file path.
func OpenStore(ctx context.Context, target string) (store.Store, error) {
	return openStore(ctx, target, sqlite.Options{})
}

func openStore(ctx context.Context, target string, o sqlite.Options) (store.Store, error) {
	if strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://") {
		return openPostgres(ctx, target)
	}
	return sqlite.Open(target, &o)
}

// openPostgres is replaced when the PostgreSQL backend is built in.
var openPostgres = func(ctx context.Context, url string) (store.Store, error) {
	return nil, errors.New("this build has no PostgreSQL backend; use a SQLite path for --db")
}

// engine opens the store and returns an engine over it; close the store
// when done.
func (b *base) engine(ctx context.Context) (*scrollback.Engine, store.Store, error) {
	st, err := b.openStore(ctx)
	if err != nil {
		return nil, nil, err
	}
	return b.newEngine(st), st, nil
}

// useSession opens the store and the session the flags and environment name;
// close the store when done.
func (b *base) useSession(ctx context.Context) (*scrollback.Session, store.Store, error) {
	eng, st, err := b.engine(ctx)
	if err != nil {
		return nil, nil, err
	}
	sess, err := b.openSession(ctx, eng, false)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return sess, st, nil
}

// newEngine returns an engine over st with the CLI's options: its footers
// name the CLI's commands (with --session, when one was given).
func (b *base) newEngine(st store.Store) *scrollback.Engine {
	return scrollback.New(st, b.engineOptions())
}

// engineOptions are the options of the CLI's engines.
func (b *base) engineOptions() scrollback.Options {
	return scrollback.Options{File: fileOptions(b.io.Getenv), CodeWorkers: b.codeWorkers, Surface: present.CLI(b.session)}
}

// previewBytes is the --preview-bytes flag of the servers (mcp, proxy):
// what a result over its budget shows once it is retained.
type previewBytes struct{ n int }

func (p *previewBytes) add(fs *flag.FlagSet) {
	fs.IntVar(&p.n, "preview-bytes", scrollback.ShownBudget, fmt.Sprintf("show at most `N` bytes (head, footer and tail) of a result too large to show whole, once it is retained (default %d)", scrollback.ShownBudget))
}

// check refuses a size that leaves no room for a footer, or that is over
// what the contract lets a retained result show.
func (p *previewBytes) check() error {
	if p.n < minPreviewBytes {
		return usagef("--preview-bytes %d: give at least %d bytes, room for a head, a tail and the footer that leads to the rest", p.n, minPreviewBytes)
	}
	if p.n > scrollback.MaxShownBytes {
		return usagef("--preview-bytes %d: give at most %d bytes, what a retained result may show; the rest is read from its copy", p.n, scrollback.MaxShownBytes)
	}
	return nil
}

// minPreviewBytes is the smallest --preview-bytes: room for the shortest
// footers.
const minPreviewBytes = scrollback.MinShownBytes

// denyFlag collects repeated --deny patterns for read_file
// (filepager.Options.Deny).
type denyFlag []string

func (d *denyFlag) String() string { return strings.Join(*d, ",") }

// Get makes it a string flag (flag.Getter): any pattern but a malformed
// one is taken.
func (d *denyFlag) Get() any { return d.String() }

func (d *denyFlag) Set(v string) error {
	if _, err := filepath.Match(v, ""); err != nil || v == "" {
		return fmt.Errorf("%q is not a pattern (filepath.Match syntax: *, ?, [a-z])", v)
	}
	*d = append(*d, v)
	return nil
}

// denyUsage is the --deny flag's help.
const denyUsage = "also refuse read_file of paths whose absolute path (symlinks resolved) or base name matches `PATTERN`, with the sensitive kind; repeatable (default none)"

// fileOptions places the file pager's line index beside the other state.
func fileOptions(getenv func(string) string) (o filepager.Options) {
	if dir := getenv("XDG_CACHE_HOME"); dir != "" && filepath.IsAbs(dir) {
		o.IndexDir = filepath.Join(dir, "scrollback", "lineindex")
	} else if home := getenv("HOME"); home != "" {
		o.IndexDir = filepath.Join(home, ".cache", "scrollback", "lineindex")
	}
	return o
}

// openSession resolves the session, the one place the CLI decides it:
// --session, else $SCROLLBACK_SESSION, else (fresh false) the database's
// default session or (fresh true, for the servers) a new session.
func (b *base) openSession(ctx context.Context, eng *scrollback.Engine, fresh bool) (*scrollback.Session, error) {
	id := b.session
	if id == "" {
		id = b.io.Getenv("SCROLLBACK_SESSION")
	}
	switch {
	case id != "":
		return eng.Session(ctx, scrollback.LocalOwner, id)
	case fresh:
		return eng.NewSession(ctx, scrollback.LocalOwner)
	}
	return eng.DefaultSession(ctx, scrollback.LocalOwner)
}

// wantsJSON reports whether --json was given.
func (b *base) wantsJSON() bool { return b.json }

// printJSON writes v as indented JSON, without HTML escaping.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// servingGCPercent is the garbage collector's target when serving many
// HTTP clients: each call allocates a few hundred KB of short-lived JSON,
// and with Go's default (100) the collector ran so often that it set the
// tail latency; 400 gave about half as much CPU per call again and cut the
// p99 of 50 concurrent readers by 40%, for a heap a few tens of MB larger
// (see docs/mcp.md). Memory stays bounded: a soft limit keeps the heap
// under servingMemoryLimit whatever the setting.
const (
	servingGCPercent   = 400
	servingMemoryLimit = 1 << 30
)

// tuneGCForServing applies servingGCPercent and servingMemoryLimit unless
// the user set GOGC or GOMEMLIMIT, which then win.
func tuneGCForServing(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(servingGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(servingMemoryLimit)
	}
}
