package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/present"
)

// MetaErrorKind is the _meta key of every tool error scrollback makes: the
// error's kind, as scrollback.ErrorKind names it ("not_found", "evicted",
// "offset", "argument", "sensitive", "unavailable").
const MetaErrorKind = present.MetaErrorKind

// FinishResults returns the middleware that gives every tools/call result of
// a server bound to b its shape, so that each server (NewServer, the HTTP
// handler's servers, the proxy's) shapes results the same way and no tool
// handler has to:
//
//   - _meta carries MetaSession, the bound session's id, once the session
//     exists (failures included);
//   - a call of a tool the server does not have is a tool error (isError,
//     never a protocol error) naming the tools there are, which tools lists;
//   - a client of a protocol older than 2025-06-18 gets no resource_link
//     blocks, a content type it does not know;
//   - a failure a handler returned (an error recorded with SetError, as the
//     SDK does for a typed handler's error and for arguments that do not
//     match the input schema) gets MetaErrorKind, its message starts with
//     the tool's name, and a message longer than 2 KiB is cut on a character
//     boundary, saying how long it was.
//
// foreign, when not nil, names the tools whose results are another
// server's, passed through as they are (an upstream's, behind the proxy):
// their results are left untouched unless they are failures a handler
// returned. A result that sets isError on its own, without an error
// recorded, is the tool's to word and is never cut or given a kind.
func FinishResults(b *Binding, tools func() []string, foreign func(tool string) bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method != "tools/call" {
				return res, err
			}
			var werr *jsonrpc.Error
			if errors.As(err, &werr) && werr.Code == jsonrpc.CodeInvalidParams && strings.HasPrefix(werr.Message, "unknown tool") {
				r := newToolResult(req)
				msg := werr.Message
				if toolName(req) == "" {
					msg = `tools/call: the tool's name is missing: give "name"`
				}
				r.Content = []mcp.Content{&mcp.TextContent{Text: present.UnknownTool(msg, tools())}}
				r.SetError(fmt.Errorf("%w: %s", scrollback.ErrArgument, werr.Message))
				res, err = r, nil
			}
			r, ok := res.(*mcp.CallToolResult)
			if !ok || r == nil || err != nil {
				return res, err
			}
			e := r.GetError()
			if e == nil && foreign != nil && foreign(toolName(req)) {
				return res, err
			}
			if s := b.Current(); s != nil {
				present.SetMeta(&r.Meta, MetaSession, s.ID())
			}
			if !linksKnown(req) {
				dropLinks(r)
			}
			if e != nil {
				if msg, kind := outOfRange(e, req); kind != nil {
					r.Content = []mcp.Content{&mcp.TextContent{Text: msg}}
					e = fmt.Errorf("%w: %s", kind, msg)
					r.SetError(e)
				}
				present.SetMeta(&r.Meta, MetaErrorKind, scrollback.ErrorKind(e))
				prefixToolName(r, req)
				cutMessage(r)
			}
			return res, err
		}
	}
}

// linkVersion is the first protocol version with the resource_link
// content block.
const linkVersion = "2025-06-18"

// linksKnown reports whether the client of req knows resource_link
// content blocks: it negotiated linkVersion or later. A client of an older
// version validates content against a union without that type, and a
// strict one (a schema-checking SDK) then fails the whole call.
func linksKnown(req mcp.Request) bool {
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok || ss == nil {
		return true
	}
	ip := ss.InitializeParams()
	if ip == nil {
		return true
	}
	// A version the server does not speak was answered with its latest.
	v := ip.ProtocolVersion
	return v >= linkVersion || !slices.Contains(mcp.SupportedProtocolVersions(), v)
}

// dropLinks removes r's resource_link blocks; its text still names the
// copy (the footer's read_tool_output call).
func dropLinks(r *mcp.CallToolResult) {
	r.Content = slices.DeleteFunc(r.Content, func(c mcp.Content) bool {
		_, link := c.(*mcp.ResourceLink)
		return link
	})
}

// toolName is the name of the tool a tools/call request calls.
func toolName(req mcp.Request) string {
	if ctr, ok := req.(*mcp.CallToolRequest); ok && ctr.Params != nil {
		return ctr.Params.Name
	}
	return ""
}

// prefixToolName makes a failure's message start with the tool's name (the
// SDK's own messages do not), and points messages about arguments that do
// not match the input schema at the schema.
func prefixToolName(r *mcp.CallToolResult, req mcp.Request) {
	ctr, ok := req.(*mcp.CallToolRequest)
	if !ok || ctr.Params == nil || len(r.Content) == 0 {
		return
	}
	tc, ok := r.Content[0].(*mcp.TextContent)
	if !ok || ctr.Params.Name == "" || strings.HasPrefix(tc.Text, ctr.Params.Name+":") {
		return
	}
	msg := tc.Text
	if head, _, _ := strings.Cut(msg, "\n"); !strings.Contains(head, "tool "+ctr.Params.Name+":") {
		msg = ctr.Params.Name + ": " + msg
	}
	// The validator names a null by its Go reflection ("<invalid
	// reflect.Value>"): say null, and what to send instead.
	if strings.Contains(msg, nullType) {
		msg = strings.ReplaceAll(msg, nullType, `type: null given, want`) + "; leave an optional argument out instead of sending null"
	}
	if strings.Contains(tc.Text, "validating \"arguments\"") || strings.Contains(tc.Text, "json: ") || strings.Contains(tc.Text, "cannot unmarshal") {
		msg += present.SchemaHint
	}
	r.Content[0] = &mcp.TextContent{Text: msg}
}

// outOfRange rewords a whole-number argument too large for the Go field
// it decodes into (an offset of 1e30): the schema says integer and the
// number is one, so the decoder's message about Go types would only
// confuse. An offset so large is past the end of any copy or file: the
// "offset" kind, as any offset out of range; another number, the
// "argument" kind. The number is quoted as the client sent it. It returns
// the message and the kind, or a nil kind when e is no such failure.
func outOfRange(e error, req mcp.Request) (string, error) {
	var ute *json.UnmarshalTypeError
	ctr, ok := req.(*mcp.CallToolRequest)
	if !errors.As(e, &ute) || !ok || ctr.Params == nil || ute.Field == "" || strings.Contains(ute.Field, ".") {
		return "", nil
	}
	switch ute.Type.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
	default:
		return "", nil
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(ctr.Params.Arguments, &args) != nil {
		return "", nil
	}
	v := strings.TrimSpace(string(args[ute.Field]))
	if v == "" || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return "", nil // not a number: the decoder's message says what it is
	}
	v = present.Clip(v, 64)
	if ute.Field == "offset" || ute.Field == "byte_offset" {
		return fmt.Sprintf("%s: %s %s is out of range: an offset is a byte position from 0 to totalBytes", ctr.Params.Name, ute.Field, v), scrollback.ErrOffset
	}
	return fmt.Sprintf("%s: %s %s is out of range for a whole number%s", ctr.Params.Name, ute.Field, v, present.SchemaHint), scrollback.ErrArgument
}

// nullType is how the SDK's schema validator words a null where a value
// of another type is wanted.
const nullType = `type: <invalid reflect.Value> has type "null", want`

// maxMessage bounds a tool error's text: a message that quotes a 10 MiB
// argument back must not become a 10 MiB result.
const maxMessage = 2048

// cutMessage cuts an over-long error message (present.Clip), which says
// so.
func cutMessage(r *mcp.CallToolResult) {
	if len(r.Content) == 0 {
		return
	}
	tc, ok := r.Content[0].(*mcp.TextContent)
	if !ok || len(tc.Text) <= maxMessage {
		return
	}
	r.Content[0] = &mcp.TextContent{Text: present.Clip(tc.Text, maxMessage)}
}

// newToolResult is an empty result for a tools/call that a middleware
// answers, outside the SDK's tool handlers: for a client of protocol
// 2026-07-28 it says it is complete (resultType), which the SDK says only
// of its handlers' results and can be set only by decoding one.
func newToolResult(req mcp.Request) *mcp.CallToolResult {
	var r mcp.CallToolResult
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		if ip := ss.InitializeParams(); ip != nil && ip.ProtocolVersion >= StatelessVersion {
			json.Unmarshal([]byte(`{"content":[],"resultType":"complete"}`), &r) // cannot fail
		}
	}
	return &r
}
