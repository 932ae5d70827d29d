// Package scrollback is the engine behind scrollback: it separates the text a
// tool shows at once (a bounded, UTF-8-safe preview) from a larger retained
// copy, stored per session, and pages through that copy by UTF-8 byte offset
// without re-running anything.
//
// An Engine wires the parts together over one store.Store:
//
//   - package preview cuts a result to a head, a footer and a tail;
//   - package capture bounds what a command writes, stdout and stderr merged
//     in arrival order, keeping the head and the tail past the copy cap;
//   - package runner runs a command in its own process group;
//   - package filepager pages through files by line and byte offset;
//   - package grep searches a retained copy without holding it whole;
//   - package codemode runs JavaScript that calls the tools (run_code);
//   - package store and its backends (store/sqlite, store/postgres) keep
//     sessions and copies.
//
// A Session, got from Engine.NewSession, DefaultSession or Session, offers
// the tools of the product contract as methods: RunCommand, ReadToolOutput,
// GrepToolOutput, QueryToolOutput, ReadFile, RunCode, and Retain and History
// for the results of other tools. Their input and result types carry the
// contract's JSON names, so the CLI's --json output, the MCP tools'
// structured content and the Go API are one shape.
//
// The Engine owns sessions: NewSession, DefaultSession, Session,
// ListSessions, ForkSession and DeleteSession, each scoped to an owner (a
// session of another owner reads exactly like one that does not exist).
//
// Every tool failure is an *Error (what was wrong, and in Hint what would be
// right) wrapping a sentinel of this package that errors.Is finds from any
// package: ErrNotFound, ErrEvicted, ErrOffset, ErrArgument, ErrSensitive,
// ErrUnavailable. ErrorKind names them as the contract does ("not_found",
// ...), for the MCP servers' _meta and the CLI's --json alike. A call cut short
// by the end of its context returns an *Error in which errors.Is finds
// context.Canceled or context.DeadlineExceeded, and ErrUnavailable, the
// sentinel of its kind (ErrorKind calls it "unavailable"); RunCode says so in
// its result's Error instead.
//
// Two flags answer two questions and are never merged: HasMore says the
// reader has not reached the end of the retained text; Complete says whether
// that text holds everything the tool produced.
package scrollback
