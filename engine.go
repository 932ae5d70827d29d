package scrollback

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/scrollback-dev/scrollback/capture"
	"github.com/scrollback-dev/scrollback/codemode"
	"github.com/scrollback-dev/scrollback/filepager"
	"github.com/scrollback-dev/scrollback/jsonq"
	"github.com/scrollback-dev/scrollback/present"
	"github.com/scrollback-dev/scrollback/preview"
	"github.com/scrollback-dev/scrollback/store"
)

// The contract's numbers. Every one is a default that Options can change.
const (
	PreviewBudget = preview.Budget             // 24 KiB: run_command and run_code show an output up to this whole
	HistoryBudget = preview.HistoryBudget      // 32 KiB: results entering a history are shown whole up to this
	ShownBudget   = preview.ShownBudget        // 2 KiB: what a result over its budget shows once retained, head, footer and tail
	MinShownBytes = 512                        // the smallest budget or shown size: room for a head, a tail and the shortest footer; New raises smaller ones to it
	MaxShownBytes = 8 << 10                    // the most the servers let a result over its budget show once retained (--preview-bytes); a Go caller's ShownBytes may go past it
	PageLimit     = 4096                       // most bytes one read_tool_output call returns
	CopyCap       = capture.DefaultCopy        // 8 MiB: the most one retained copy holds
	FilePageBytes = filepager.DefaultPageBytes // 24 KiB: the most one read_file page holds
)

// LocalOwner owns the sessions of the CLI, of the stdio MCP server and of an
// HTTP server run without a token: the person at this machine.
const LocalOwner = "local"

// Options configures an Engine. The zero value gives the contract's defaults.
type Options struct {
	// PreviewBudget, HistoryBudget and ShownBytes below MinShownBytes are
	// raised to it, room for the footer that leads to the rest.
	PreviewBudget int             // output up to this many bytes is shown whole by RunCommand and RunCode; 0 = PreviewBudget
	HistoryBudget int             // results up to this many bytes are shown whole by History; 0 = HistoryBudget
	ShownBytes    int             // most bytes a result over its budget shows once retained (head, footer and tail); 0 = ShownBudget
	Surface       present.Surface // how footers name the calls that continue: MCP tools (the zero value) or CLI commands
	Capture       capture.Limits  // stdout, stderr and copy caps; zero fields = 8 MiB each, 2 MiB tail
	// GatherOutput reads a fast command's output in fewer, larger reads
	// (runner.Command.Gather), for a process that runs one command and
	// little else (scrollback run). Leave it off in a server: the reader
	// of such a command holds a thread of the scheduler while it waits.
	GatherOutput bool
	// File configures read_file: the page budget (24 KiB), the default
	// line limit (2000), a root that confines reads, extra deny patterns.
	File filepager.Options
	// DefaultTimeout applies to commands that give no timeout; 0 or
	// less = none (New reports a negative one as 0).
	DefaultTimeout time.Duration
	// QueryTimeout stops a query_tool_output filter; 0 = QueryTimeout (5 s).
	QueryTimeout time.Duration
	// QueryMaxOutput bounds a filter's results in bytes; 0 = QueryMaxOutput.
	QueryMaxOutput int
	// QueryMaxMemory bounds the heap's growth while a filter runs; 0 =
	// jsonq.DefaultMaxMemory (512 MiB), < 0 = no limit. With CodeWorkers
	// it bounds the filter's worker process too (see codemode.Pool.Query).
	QueryMaxMemory int64
	// CodeWorkers runs run_code's scripts and query_tool_output's
	// filters in worker processes, each under the operating system's
	// limits and sandbox (see codemode.Pool); nil runs them in this
	// process (a program whose main does not call codemode.WorkerMain).
	// The Engine does not own it: close it yourself when done.
	CodeWorkers *codemode.Pool
}

// Engine runs tools and keeps their retained copies in a Store. It is safe
// for concurrent use.
type Engine struct {
	store   store.Store
	opts    Options
	files   *filepager.Pager
	queries *queryCache // recent query_tool_output results, for paging
}

// New returns an Engine over st. The Engine does not own st: close st
// yourself when done.
//
// An Engine made with a nil st (or the nil *sqlite.DB that a failed
// sqlite.Open returns) only reads files: every call that needs the store
// returns an *Error wrapping ErrUnavailable that says so.
func New(st store.Store, opts Options) *Engine {
	if st != nil {
		if v := reflect.ValueOf(st); v.Kind() == reflect.Pointer && v.IsNil() {
			st = nil
		}
	}
	if opts.PreviewBudget <= 0 {
		opts.PreviewBudget = PreviewBudget
	}
	if opts.HistoryBudget <= 0 {
		opts.HistoryBudget = HistoryBudget
	}
	if opts.ShownBytes <= 0 {
		opts.ShownBytes = ShownBudget
	}
	// A smaller size leaves no room for the footer: the preview would
	// be cut short with nothing saying where the rest is.
	opts.PreviewBudget = max(opts.PreviewBudget, MinShownBytes)
	opts.HistoryBudget = max(opts.HistoryBudget, MinShownBytes)
	opts.ShownBytes = max(opts.ShownBytes, MinShownBytes)
	if opts.File.PageBytes <= 0 {
		opts.File.PageBytes = FilePageBytes
	}
	if opts.File.MaxLines <= 0 {
		opts.File.MaxLines = filepager.DefaultMaxLines
	}
	// The engine's own patterns: Options reports them, and a caller's
	// later change to its slice must not make it report others.
	opts.File.Deny = slices.Clone(opts.File.Deny)
	opts.Capture = opts.Capture.InForce() // so that Options reports the caps in force
	opts.DefaultTimeout = max(opts.DefaultTimeout, 0)
	if opts.QueryTimeout <= 0 {
		opts.QueryTimeout = QueryTimeout
	}
	if opts.QueryMaxOutput <= 0 {
		opts.QueryMaxOutput = QueryMaxOutput
	}
	if opts.QueryMaxMemory == 0 {
		opts.QueryMaxMemory = jsonq.DefaultMaxMemory
	}
	return &Engine{store: st, opts: opts, files: filepager.New(opts.File), queries: &queryCache{max: QueryCacheBytes}}
}

// usable returns the *Error a call of op gets when e cannot make it: e was
// not made by New, or op needs a store and e has none. A zero Engine or a
// nil store would otherwise be a nil pointer panic deep in the call.
func (e *Engine) usable(op string, needStore bool) error {
	switch {
	case e == nil || e.files == nil:
		return &Error{Op: op, Err: ErrUnavailable, Msg: "the Engine was not made by scrollback.New",
			Hint: "make it with scrollback.New(st, opts), st from sqlite.Open or postgres.Open"}
	case needStore && e.store == nil:
		return &Error{Op: op, Err: ErrUnavailable, Msg: "the Engine has no store (scrollback.New was given a nil one), so it can only read files",
			Hint: "give scrollback.New the store that sqlite.Open or postgres.Open returned, checking their error first"}
	}
	return nil
}

// Store returns the engine's store; nil for a nil Engine.
func (e *Engine) Store() store.Store {
	if e == nil {
		return nil
	}
	return e.store
}

// Options returns the options in force, defaults filled in; the zero
// Options for a nil Engine. Its File.Deny is a copy: changing it changes
// nothing in the engine.
func (e *Engine) Options() Options {
	if e == nil {
		return Options{}
	}
	o := e.opts
	o.File.Deny = slices.Clone(o.File.Deny)
	return o
}

// Session returns a handle on session id owned by owner, or an *Error
// wrapping ErrNoSession when there is none (another owner's session reads
// the same as a missing one).
func (e *Engine) Session(ctx context.Context, owner, id string) (*Session, error) {
	if err := e.usable("session", true); err != nil {
		return nil, err
	}
	s, err := e.store.GetSession(ctx, owner, id)
	if err != nil {
		return nil, sessionError("session", id, err)
	}
	return &Session{e: e, info: s}, nil
}

// NewSession creates a session owned by owner.
func (e *Engine) NewSession(ctx context.Context, owner string) (*Session, error) {
	if err := e.usable("session", true); err != nil {
		return nil, err
	}
	s, err := e.store.CreateSession(ctx, owner)
	if err != nil {
		return nil, &Error{Op: "session", Err: err, Msg: "cannot create a session: " + err.Error()}
	}
	return &Session{e: e, info: s}, nil
}

// DefaultSession returns owner's default session in this store, creating it
// on first use.
func (e *Engine) DefaultSession(ctx context.Context, owner string) (*Session, error) {
	if err := e.usable("session", true); err != nil {
		return nil, err
	}
	s, err := e.store.DefaultSession(ctx, owner)
	if err != nil {
		return nil, &Error{Op: "session", Err: err, Msg: "cannot open the default session: " + err.Error()}
	}
	return &Session{e: e, info: s, dflt: true}, nil
}

// CopySession returns a handle on the session of owner's that holds copy
// id, or held it until it was evicted: for a reader scoped to an owner
// rather than to one session, as MCP's resources/read is (the contract
// gives a copy's resource to the principal that owns it). An id that none
// of owner's sessions holds, another owner's included, is an *Error
// wrapping ErrNoOutput, as in a session.
func (e *Engine) CopySession(ctx context.Context, owner, id string) (*Session, error) {
	const op = "find copy"
	if err := e.usable(op, true); err != nil {
		return nil, err
	}
	sid, err := e.store.CopySession(ctx, owner, id)
	switch {
	case errors.Is(err, store.ErrCopyNotFound):
		return nil, &Error{Op: op, Err: ErrNoOutput, Msg: ErrNoOutput.Error() + ": " + quoteArg(id)}
	case err != nil:
		return nil, &Error{Op: op, Err: err, Msg: err.Error()}
	}
	return e.Session(ctx, owner, sid)
}

// ListSessions returns owner's sessions, oldest first, with their copy
// counts and sizes.
func (e *Engine) ListSessions(ctx context.Context, owner string) ([]store.Session, error) {
	if err := e.usable("session", true); err != nil {
		return nil, err
	}
	ss, err := e.store.ListSessions(ctx, owner)
	if err != nil {
		return nil, &Error{Op: "session", Err: err, Msg: "cannot list the sessions: " + err.Error()}
	}
	return ss, nil
}

// ForkSession makes a new session owned by owner, forked from session id:
// it does not share the parent's copies. A parent that does not exist or
// belongs to another owner is an *Error wrapping ErrNoSession, as for
// Session.
func (e *Engine) ForkSession(ctx context.Context, owner, id string) (*Session, error) {
	if err := e.usable("session fork", true); err != nil {
		return nil, err
	}
	s, err := e.store.ForkSession(ctx, owner, id)
	if err != nil {
		return nil, sessionError("session fork", id, err)
	}
	return &Session{e: e, info: s}, nil
}

// DeleteSession deletes session id and every copy in it, reclaiming their
// space. A session that does not exist or belongs to another owner is an
// *Error wrapping ErrNoSession, as for Session.
func (e *Engine) DeleteSession(ctx context.Context, owner, id string) error {
	if err := e.usable("session delete", true); err != nil {
		return err
	}
	if err := e.store.DeleteSession(ctx, owner, id); err != nil {
		return sessionError("session delete", id, err)
	}
	return nil
}

func sessionError(op, id string, err error) error {
	if errors.Is(err, store.ErrSessionNotFound) {
		return &Error{Op: op, Err: ErrNoSession, Msg: "no session " + quoteArg(id) + " for this owner",
			Hint: "use a session this owner made, or start a new one"}
	}
	return &Error{Op: op, Err: err, Msg: err.Error()}
}

// Session is a handle on one session: the tools of the contract, scoped to
// it. Every retained copy a Session makes belongs to it, and it reads only
// its own copies. It is safe for concurrent use, and needs no closing: the
// session lives in the store until Engine.DeleteSession or retention.
//
// A session deleted while a handle is still in use (by `scrollback session
// rm` or retention in another process, say) is not revived: its copies are
// gone for good, and reading them gets the not_found error. The handle's
// next save notices and moves the handle to a fresh session of the same
// owner (the owner's new default session, for a handle got from
// DefaultSession), saves the copy there, and from then on ID and Info
// report the new session: a long-running server keeps its recovery
// instead of failing every later save.
type Session struct {
	e    *Engine
	dflt bool // got from DefaultSession: a replacement is the owner's next default

	mu   sync.Mutex // guards info, which a save replaces (see renew)
	info store.Session
}

// usable returns the *Error a call of op gets on a Session that no Engine
// made (a zero or nil *Session), instead of a nil pointer panic.
func (s *Session) usable(op string) error {
	if s == nil || s.e == nil {
		return &Error{Op: op, Err: ErrUnavailable, Msg: "the Session was not got from an Engine",
			Hint: "get one from Engine.NewSession, DefaultSession or Session"}
	}
	return nil
}

// ID returns the session's id: another one from the save that found the
// session deleted on (see Session).
func (s *Session) ID() string { return s.Info().ID }

// Owner returns the principal that owns the session.
func (s *Session) Owner() string { return s.Info().Owner }

// Info returns what the store knew of the session when this handle was
// made (or moved to a fresh session: see Session): its Copies, Bytes and
// LastUsedAt are not updated as the session is used (Engine.ListSessions
// and Session.Copies read them afresh). A nil Session has the zero Info.
func (s *Session) Info() store.Session {
	if s == nil {
		return store.Session{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

// saveCopy saves a retained copy in this session. When the store says the
// session is gone (deleted under this handle), it moves the handle to a
// fresh session and saves the copy there instead.
func (s *Session) saveCopy(ctx context.Context, meta store.CopyMeta, data []byte) (store.CopyInfo, error) {
	id := s.ID()
	info, err := s.e.store.SaveCopy(ctx, id, meta, bytes.NewReader(data))
	if !errors.Is(err, store.ErrSessionNotFound) {
		return info, err
	}
	next, rerr := s.renew(ctx, id)
	if rerr != nil {
		return store.CopyInfo{}, fmt.Errorf("%s: %w", present.SessionGone(id), rerr)
	}
	return s.e.store.SaveCopy(ctx, next, meta, bytes.NewReader(data))
}

// renew moves the handle from session gone, found deleted, to a fresh
// session of the same owner, and returns the id it is on. Concurrent
// saves that found gone deleted share one fresh session: the first makes
// it, the others find the handle already moved.
func (s *Session) renew(ctx context.Context, gone string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.info.ID != gone {
		return s.info.ID, nil
	}
	var next store.Session
	var err error
	if s.dflt {
		next, err = s.e.store.DefaultSession(ctx, s.info.Owner)
	} else {
		next, err = s.e.store.CreateSession(ctx, s.info.Owner)
	}
	if err != nil {
		return "", err
	}
	s.info = next
	return next.ID, nil
}

// Engine returns the engine the session belongs to; nil for a Session no
// Engine made.
func (s *Session) Engine() *Engine {
	if s == nil {
		return nil
	}
	return s.e
}

// Copies lists the session's retained copies, oldest first.
func (s *Session) Copies(ctx context.Context) ([]store.CopyInfo, error) {
	if err := s.usable("ls"); err != nil {
		return nil, err
	}
	id := s.ID()
	cs, err := s.e.store.ListCopies(ctx, id)
	if err != nil {
		return nil, sessionError("ls", id, err)
	}
	return cs, nil
}
