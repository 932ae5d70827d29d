package proxy

import (
	"context"
	"fmt"

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
