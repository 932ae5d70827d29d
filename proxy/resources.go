package proxy

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback/mcpserver"
)

// listResources answers resources/list as scrollback mcp does, with the
// upstream's resources first: the SDK's pages of them (every page of the
// upstream's list, in its order), then the session's retained copies,
// oldest first, mcpserver.CopiesPageSize to a page, the first of them on the
// upstream's last page. A client that attaches resources rather than
// expanding templates so finds every copy. The list names the principal's
// copies: cacheScope private.
func (s *server) listResources(ctx context.Context, next mcp.MethodHandler, lr *mcp.ListResourcesRequest) (mcp.Result, error) {
	from, copiesOnly := 0, false
	if lr.Params != nil {
		n, ok, err := mcpserver.ParseCopiesCursor(lr.Params.Cursor)
		if err != nil {
			return nil, err
		}
		if ok {
			// The SDK's first page gives the result its shape (what the
			// client's protocol version expects); its resources go.
			first := *lr
			p := *lr.Params
			p.Cursor = ""
			first.Params = &p
			lr, from, copiesOnly = &first, n, true
		}
	}
	res, err := next(ctx, "resources/list", lr)
	if err != nil && !copiesOnly && lr.Params != nil && lr.Params.Cursor != "" && invalidParams(err) {
		return s.foreignCursor(ctx, lr)
	}
	out, ok := res.(*mcp.ListResourcesResult)
	if err != nil || !ok {
		return res, err
	}
	out.CacheScope = "private"
	if copiesOnly {
		out.Resources, out.NextCursor = []*mcp.Resource{}, ""
	} else {
		inUpstreamOrder(out, s.snapshot())
		if out.NextCursor != "" {
			return out, nil
		}
	}
	// A store that cannot list the copies fails the list, and a session
	// the caller does not own is not_found, as in scrollback mcp: a list
	// without them would say there are none.
	sess, err := s.b.Existing(ctx)
	if err != nil {
		return nil, mcpserver.ResourceError("", fmt.Errorf("resources/list: %w", err))
	}
	if sess == nil {
		return out, nil // no session yet: no copies
	}
	copies, err := sess.Copies(ctx)
	if err != nil {
		return nil, mcpserver.ResourceError("", fmt.Errorf("resources/list: %w", err))
	}
	page, cursor := mcpserver.CopiesPage(copies, from)
	out.Resources, out.NextCursor = append(out.Resources, page...), cursor
	return out, nil
}

// foreignCursor answers a resources/list whose cursor neither the proxy's
// pages nor its copies' gave (a made-up one, or one the upstream gave a
// direct connection) with the upstream's own answer to it, result or
// error, unchanged but for the cacheScope an upstream before 2026-07-28
// leaves out: the answer the client would get without the proxy. The
// everything-server (a TypeScript SDK McpServer) ignores a cursor it does
// not know and lists everything; a Go SDK server refuses it (-32602).
func (s *server) foreignCursor(ctx context.Context, lr *mcp.ListResourcesRequest) (mcp.Result, error) {
	if err := s.unowned(ctx); err != nil {
		return nil, mcpserver.ResourceError("", fmt.Errorf("resources/list: %w", err))
	}
	res, err := forward(ctx, s, lr.Session, func(ctx context.Context, c *conn) (*mcp.ListResourcesResult, error) {
		up := *lr.Params
		up.Meta = upstreamMeta(lr.Params.Meta, c)
		return c.cs.ListResources(ctx, &up)
	})
	if err != nil {
		return nil, err
	}
	if res.CacheScope == "" {
		// An upstream before 2026-07-28 says none: the protocol's
		// default, as the SDK's own results say it (and resources/read's).
		res.CacheScope = "public"
	}
	return res, nil
}

// invalidParams reports whether err is a JSON-RPC "invalid params" error,
// the SDK's answer to a list cursor it cannot decode.
func invalidParams(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == jsonrpc.CodeInvalidParams
}
