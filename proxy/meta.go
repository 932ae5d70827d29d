package proxy

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/mcpserver"
)

// The proxy speaks every protocol version to its clients and to its
// upstream, each side its own: a client of 2026-07-28 in front of an
// upstream that speaks only 2025-11-25, or the other way round. What a
// request's _meta carries passes through, except what belongs to the
// protocol of one side (see upstreamMeta and clientMeta).

// protocolMeta starts the _meta keys of protocol 2026-07-28 itself: the
// request's protocol version, client capabilities and identity, the
// response's server identity.
const protocolMeta = "io.modelcontextprotocol/"

// upstreamMeta is the _meta a client's request passes on to the upstream
// over c: all of it but the progress token (the proxy sends one of its
// own) and the protocol's keys, which the SDK sets for c's version. When
// c speaks 2026-07-28, the client's capabilities and identity pass on, so
// that the upstream asks the client only for what it can do.
func upstreamMeta(m mcp.Meta, c *conn) mcp.Meta {
	if len(m) == 0 {
		return nil
	}
	modern := false
	if init := c.cs.InitializeResult(); init != nil {
		modern = init.ProtocolVersion >= mcpserver.StatelessVersion
	}
	out := mcp.Meta{}
	for k, v := range m {
		switch {
		case k == "progressToken":
		case strings.HasPrefix(k, protocolMeta):
			if modern && (k == mcp.MetaKeyClientCapabilities || k == mcp.MetaKeyClientInfo) {
				out[k] = v
			}
		default:
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// clientMeta drops from an upstream result's _meta the upstream's
// identity, which protocol 2026-07-28 puts there: the client talks to the
// proxy, which names itself.
func clientMeta(m mcp.Meta) mcp.Meta {
	delete(m, mcp.MetaKeyServerInfo)
	return m
}

// The upstream's results as the proxy passes them on: the same fields,
// the _meta without the upstream's identity (clientMeta), and without the
// result type the SDK decoded from a 2026-07-28 upstream, which the
// proxy's server sets for its own client's version (and leaves out for an
// older one).

func toolResultForClient(r *mcp.CallToolResult) *mcp.CallToolResult {
	return &mcp.CallToolResult{Meta: clientMeta(r.Meta), Content: r.Content, StructuredContent: r.StructuredContent,
		IsError: r.IsError, InputRequests: r.InputRequests, RequestState: r.RequestState}
}

func promptForClient(r *mcp.GetPromptResult) *mcp.GetPromptResult {
	return &mcp.GetPromptResult{Meta: clientMeta(r.Meta), Description: r.Description, Messages: r.Messages,
		InputRequests: r.InputRequests, RequestState: r.RequestState}
}

func readForClient(r *mcp.ReadResourceResult) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Meta: clientMeta(r.Meta), Cacheable: r.Cacheable, Contents: r.Contents,
		InputRequests: r.InputRequests, RequestState: r.RequestState}
}

// modernCaller reports whether ss's client speaks protocol 2026-07-28 or
// later: it gets a result that needs its input as it is, not asked during
// the call.
func modernCaller(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion >= mcpserver.StatelessVersion
}

// A client of protocol 2026-07-28 wants each resources/read and
// prompts/get result to say whether it is complete or needs the client's
// input (resultType). The SDK's server says so only on the results of its
// own handlers, and the proxy answers these two requests itself, in a
// middleware; these wrappers say it for the SDK.

// typedRead returns a function that passes a resources/read answer on,
// with its resultType when ss's client wants one.
func typedRead(ss *mcp.ServerSession) func(*mcp.ReadResourceResult, error) (mcp.Result, error) {
	return func(r *mcp.ReadResourceResult, err error) (mcp.Result, error) {
		if err != nil {
			return nil, err
		}
		if !modernCaller(ss) {
			return r, nil
		}
		return readWithType{r, resultTypeOf(r.InputRequests)}, nil
	}
}

// typedPrompt is typedRead for prompts/get.
func typedPrompt(ss *mcp.ServerSession) func(*mcp.GetPromptResult, error) (mcp.Result, error) {
	return func(r *mcp.GetPromptResult, err error) (mcp.Result, error) {
		if err != nil {
			return nil, err
		}
		if !modernCaller(ss) {
			return r, nil
		}
		return promptWithType{r, resultTypeOf(r.InputRequests)}, nil
	}
}

func resultTypeOf(in mcp.InputRequestMap) string {
	if in != nil {
		return "input_required"
	}
	return "complete"
}

type readWithType struct {
	*mcp.ReadResourceResult
	resultType string
}

func (r readWithType) MarshalJSON() ([]byte, error) {
	return withResultType(r.ReadResourceResult, r.resultType)
}

type promptWithType struct {
	*mcp.GetPromptResult
	resultType string
}

func (r promptWithType) MarshalJSON() ([]byte, error) {
	return withResultType(r.GetPromptResult, r.resultType)
}

// withResultType is the JSON of v, an object, with "resultType" first.
func withResultType(v any, rt string) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || len(b) < 2 || b[0] != '{' {
		return b, err
	}
	out := make([]byte, 0, len(b)+32)
	out = append(out, `{"resultType":`...)
	out = strconv.AppendQuote(out, rt)
	if len(b) > 2 {
		out = append(out, ',')
	}
	return append(out, b[1:]...), nil
}

// resourceErr is the error a resources/read answer of the proxy's own
// copies stands for: its kind is in the data (mcpserver.MetaErrorKind).
func resourceErr(err error) error {
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		return err
	}
	var data map[string]string
	if json.Unmarshal(je.Data, &data) == nil && data[mcpserver.MetaErrorKind] == scrollback.KindNotFound {
		return scrollback.ErrNotFound
	}
	return err
}
