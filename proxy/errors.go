package proxy

import (
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/scrollback-dev/scrollback"
)

// Sentinel errors. A failed call of an upstream tool is an *Error wrapping
// one of them; the client sees its text as a tool error (isError), so that
// a model can read it and decide what to do. The one exception is the
// upstream's own JSON-RPC error (Error.RPC), which the client gets as the
// upstream sent it: a protocol error with its code and data.
var (
	// ErrNoUpstream is returned by New for an Upstream that names neither
	// a command, a URL nor a Dial function, or more than one of them.
	ErrNoUpstream = errors.New("proxy: give exactly one upstream: a command, a URL or a Dial function")

	// ErrBudget is returned by New for a budget (Options.Budget or one of
	// Options.ToolBudgets) below scrollback.MinShownBytes: too small for a
	// preview, whose head, tail and footer must fit within it.
	ErrBudget = errors.New("proxy: a budget too small for a preview")

	// ErrUpstreamDown is returned when the upstream server cannot be
	// started or reached.
	ErrUpstreamDown = errors.New("proxy: the upstream server is down")

	// ErrUpstreamFailed is returned when the connection to the upstream
	// broke during a call: the server crashed, exited or hung up. The proxy
	// reconnects (restarting a command upstream) on the next call.
	ErrUpstreamFailed = errors.New("proxy: the upstream server failed during the call")

	// ErrCallTimeout is returned when the upstream did not answer a call
	// within Options.CallTimeout. The call is cancelled upstream.
	ErrCallTimeout = errors.New("proxy: the upstream server did not answer in time")

	// ErrUpstreamError is returned when the upstream answered a call with a
	// protocol error (an unknown tool, arguments it refused, ...); the
	// *Error's RPC holds it. A run_code script sees it as an error; a
	// client calling the tool gets the protocol error itself.
	ErrUpstreamError = errors.New("proxy: the upstream server refused the call")
)

// Error is a failed call of an upstream tool: what went wrong and, in Hint,
// what to do about it.
type Error struct {
	Tool string // the upstream tool called
	Err  error  // one of the sentinel errors
	Msg  string // what went wrong
	Hint string // what would help; may be empty
	// RPC is the upstream's JSON-RPC error, when it answered with one:
	// the proxy passes it on to the client as it is, code and data
	// included.
	RPC *jsonrpc.Error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("proxy: ")
	if e.Tool != "" {
		b.WriteString("tool " + e.Tool + ": ")
	}
	b.WriteString(e.Msg)
	if e.Hint != "" {
		b.WriteString("; " + e.Hint)
	}
	return b.String()
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// Is gives a failed upstream call its kind among the root package's: a
// refused call (arguments the upstream did not accept, say) is
// scrollback.ErrArgument; an upstream that is down, failed or did not
// answer in time is scrollback.ErrUnavailable.
func (e *Error) Is(target error) bool {
	switch target {
	case scrollback.ErrArgument:
		return errors.Is(e.Err, ErrUpstreamError)
	case scrollback.ErrUnavailable:
		return errors.Is(e.Err, ErrUpstreamDown) || errors.Is(e.Err, ErrUpstreamFailed) || errors.Is(e.Err, ErrCallTimeout) || errors.Is(e.Err, ErrTooManyUpstreams)
	}
	return false
}
