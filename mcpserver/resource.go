package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/present"
	"github.com/scrollback-dev/scrollback/store"
)

// Retained copies as MCP resources: each copy is the resource
// scrollback://output/ID of the session that made it.

// OutputURIPrefix starts the URI of every retained copy:
// scrollback://output/ID (package present's, as is every word here).
const OutputURIPrefix = present.OutputURIPrefix

// OutputURITemplate is the resource template of the retained copies, as
// resources/templates/list shows it.
const OutputURITemplate = present.OutputURITemplate

// The _meta keys of a copy's state, on a resources/read of a copy and on a
// result the proxy previewed.
const (
	MetaTotalBytes = present.MetaTotalBytes // the copy's length
	MetaComplete   = present.MetaComplete   // whether the copy holds the whole text
)

// OutputURI is the URI of retained copy id.
func OutputURI(id string) string { return present.OutputURI(id) }

// OutputLink is the resource_link block a result that retained a copy
// carries after its text blocks (present.OutputLink): the copy's URI, its
// id as name, its MIME type and its size in bytes (totalBytes). A client
// that reads resources gets the whole copy with resources/read, without
// the model paging it.
func OutputLink(id string, totalBytes int64) *mcp.ResourceLink {
	l := present.OutputLink(id, totalBytes)
	return &mcp.ResourceLink{URI: l.URI, Name: l.Name, MIMEType: l.MIMEType, Size: &l.Size}
}

// appendOutputLink adds the resource_links of out's retained copies, when
// out is a result that retained one (run_code: its return value's, then
// its console output's), after res's text blocks.
func appendOutputLink(res *mcp.CallToolResult, out any) {
	switch r := out.(type) {
	case scrollback.RunCommandResult:
		appendLink(res, r.OutputID, r.TotalBytes)
	case scrollback.RunCodeResult:
		appendLink(res, r.OutputID, r.TotalBytes)
		appendLink(res, r.LogsOutputID, r.LogsTotalBytes)
	}
}

// appendLink adds the resource_link of the copy id, if there is one.
func appendLink(res *mcp.CallToolResult, id string, size int64) {
	if id != "" {
		res.Content = append(res.Content, OutputLink(id, size))
	}
}

// An OutputRef is a reference to a retained copy, or to a byte range of
// it, as a string: scrollback://output/ID, optionally followed by
// #bytes=A-B (from offset A up to offset B, excluded; B may be left out
// for the end of the copy) and then #allow-incomplete (the reference may
// stand for a copy that lacks part of what its tool produced).
type OutputRef struct {
	ID              string
	From, To        int64 // the range; To < 0 is the end of the copy
	AllowIncomplete bool
}

// ParseOutputRef reads s as a reference to a retained copy. ok is false
// when s is not one: it does not start with OutputURIPrefix followed by an
// id (letters, digits, '_' and '-'). err is set when it is one but what
// follows the id is not a fragment a reference may have.
func ParseOutputRef(s string) (ref OutputRef, ok bool, err error) {
	rest, found := strings.CutPrefix(s, OutputURIPrefix)
	if !found {
		return ref, false, nil
	}
	n := 0
	for n < len(rest) && (rest[n] >= 'a' && rest[n] <= 'z' || rest[n] >= 'A' && rest[n] <= 'Z' || rest[n] >= '0' && rest[n] <= '9' || rest[n] == '_' || rest[n] == '-') {
		n++
	}
	if n == 0 || n < len(rest) && rest[n] != '#' {
		return ref, false, nil
	}
	ref = OutputRef{ID: rest[:n], To: -1}
	frag := rest[n:]
	if f, cut := strings.CutSuffix(frag, "#allow-incomplete"); cut {
		ref.AllowIncomplete, frag = true, f
	}
	if frag == "" {
		return ref, true, nil
	}
	bad := fmt.Errorf("%w: %s: after the id, a reference takes #bytes=A-B (offsets, B excluded; #bytes=A- for the rest of the copy), then optionally #allow-incomplete, as in %s#bytes=0-4096", scrollback.ErrArgument, quote(s), OutputURI(ref.ID))
	spec, found := strings.CutPrefix(frag, "#bytes=")
	if !found {
		return ref, true, bad
	}
	a, b, found := strings.Cut(spec, "-")
	from, err := strconv.ParseInt(a, 10, 64)
	if !found || err != nil || from < 0 || a[0] == '+' {
		return ref, true, bad
	}
	ref.From = from
	if b != "" {
		to, err := strconv.ParseInt(b, 10, 64)
		if err != nil || to < 0 || b[0] == '+' {
			return ref, true, bad
		}
		ref.To = to
	}
	return ref, true, nil
}

// quote quotes a caller's string for a message, cut short (present.Clip).
func quote(s string) string { return strconv.Quote(present.Clip(s, 120)) }

// outputTemplate is the resource template of the retained copies.
var outputTemplate = &mcp.ResourceTemplate{
	URITemplate: OutputURITemplate,
	Name:        present.OutputTemplateName,
	Title:       present.OutputTemplateTitle,
	Description: present.OutputTemplateDoc,
	MIMEType:    "text/plain",
}

// AddOutputResources adds the retained copies of b's session to srv as
// resources: resources/templates/list shows OutputURITemplate, and
// resources/read of scrollback://output/ID returns the copy's whole text,
// with its totalBytes and complete in _meta. A copy of another session,
// another owner's or one that never existed is the same resource-not-found
// error (-32602, see resourceError), whose data carries MetaErrorKind
// "not_found"; an evicted one's kind is "evicted".
func AddOutputResources(srv *mcp.Server, b *Binding) {
	srv.AddResourceTemplate(outputTemplate, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		return ReadOutputResource(ctx, b, uri)
	})
}

// listOutputResources returns the middleware that answers resources/list
// with the retained copies of b's session, oldest first, CopiesPageSize to a
// page: a client that attaches resources (rather than expanding
// templates) finds every copy there, one whose call was cancelled before
// its result arrived included. A binding that has made no session yet
// lists none. The list is read from the store on each call, so it also
// holds the copies other servers sharing the session made; the server
// sends no list-changed notification (its capability says so). It also
// answers resources/read of a copy's URI followed by more than the id
// with the error that says what a copy's URI is.
func listOutputResources(b *Binding) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if rr, ok := req.(*mcp.ReadResourceRequest); ok && rr.Params != nil {
				// A copy's URI with more after the id, or with a character
				// no id has, matches no template: the SDK would say only
				// "Resource not found", with no kind.
				if ref, ok, err := ParseOutputRef(rr.Params.URI); strings.HasPrefix(rr.Params.URI, OutputURIPrefix) &&
					(!ok || err != nil || OutputURI(ref.ID) != rr.Params.URI) {
					_, err := ReadOutputResource(ctx, b, rr.Params.URI)
					return nil, err
				}
			}
			lr, ok := req.(*mcp.ListResourcesRequest)
			if method != "resources/list" || !ok {
				return next(ctx, method, req)
			}
			from := 0
			if lr.Params != nil && lr.Params.Cursor != "" {
				n, ok, err := ParseCopiesCursor(lr.Params.Cursor)
				if !ok && err == nil {
					err = invalidCursor(lr.Params.Cursor) // no other cursor is ours
				}
				if err != nil {
					return nil, err
				}
				from = n
			}
			// The SDK's own answer (no static resources) carries what the
			// client's protocol version expects of a list result.
			first := *lr
			first.Params = &mcp.ListResourcesParams{}
			if lr.Params != nil {
				p := *lr.Params
				p.Cursor = ""
				first.Params = &p
			}
			res, err := next(ctx, method, &first)
			out, ok := res.(*mcp.ListResourcesResult)
			if err != nil || !ok {
				return res, err
			}
			s, err := b.Existing(ctx)
			if err != nil {
				return nil, ResourceError("", fmt.Errorf("resources/list: %w", err))
			}
			if s == nil {
				return out, nil
			}
			copies, err := s.Copies(ctx)
			if err != nil {
				return nil, ResourceError("", err)
			}
			page, next := CopiesPage(copies, from)
			out.Resources, out.NextCursor = append(out.Resources, page...), next
			return out, nil
		}
	}
}

// copiesCursor starts the cursor of every resources/list page of retained
// copies: the index of the copy the page starts at follows. The SDK's own
// cursors (base64) never hold a colon.
const copiesCursor = "copies:"

// CopiesPageSize is the most retained copies one resources/list page
// lists.
var CopiesPageSize = 200

// ParseCopiesCursor reads a resources/list cursor as one CopiesPage gave:
// the index of the copy its page starts at. ok is false for a cursor that
// is not one ("", or another list's); one that starts as one but holds no
// index is the invalid-params error that says what to pass.
func ParseCopiesCursor(cursor string) (from int, ok bool, err error) {
	rest, ok := strings.CutPrefix(cursor, copiesCursor)
	if !ok {
		return 0, false, nil
	}
	n, aerr := strconv.Atoi(rest)
	if aerr != nil || n < 0 {
		return 0, true, invalidCursor(cursor)
	}
	return n, true, nil
}

func invalidCursor(cursor string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("resources/list: invalid cursor %s; pass the nextCursor of the previous page, or none for the first", quote(cursor))}
}

// CopiesPage returns the resources/list entries of copies from index from
// on, at most CopiesPageSize of them, and the cursor of the page after
// them ("" when none follows).
func CopiesPage(copies []store.CopyInfo, from int) (page []*mcp.Resource, next string) {
	copies = copies[min(from, len(copies)):]
	if len(copies) > CopiesPageSize {
		copies = copies[:CopiesPageSize]
		next = copiesCursor + strconv.Itoa(from+CopiesPageSize)
	}
	for _, c := range copies {
		page = append(page, outputResource(c))
	}
	return page, next
}

// outputResource is the resources/list entry of copy c: its URI and id
// (the resource_link's), what made it, and its size.
func outputResource(c store.CopyInfo) *mcp.Resource {
	l := present.OutputLink(c.ID, c.TotalBytes)
	held := "the whole output"
	if !c.Complete {
		held = "part of the output (incomplete)"
	}
	return &mcp.Resource{
		URI:         l.URI,
		Name:        l.Name,
		Title:       present.Clip(c.Tool+": "+c.Source, 120),
		Description: fmt.Sprintf("Retained copy of %s: %d bytes, %d lines, %s.", c.Tool, c.TotalBytes, c.Lines, held),
		MIMEType:    l.MIMEType,
		Size:        l.Size,
	}
}

// ReadOutputResource answers resources/read of uri, a retained copy's URI,
// from b's session, as AddOutputResources does.
func ReadOutputResource(ctx context.Context, b *Binding, uri string) (*mcp.ReadResourceResult, error) {
	const op = "resources/read"
	ref, ok, err := ParseOutputRef(uri)
	if err == nil && (!ok || ref.From != 0 || ref.To >= 0 || ref.AllowIncomplete) {
		err = fmt.Errorf("%w: %s: a retained copy's URI is %s followed by its output_id, nothing else", scrollback.ErrNoOutput, quote(uri), OutputURIPrefix)
	}
	if err != nil {
		return nil, ResourceError(uri, fmt.Errorf("%s: %w", op, err))
	}
	s, err := b.Existing(ctx)
	if err != nil {
		return nil, ResourceError(uri, err)
	}
	var text bytes.Buffer
	var info store.CopyInfo
	err = &scrollback.Error{Op: op, Err: scrollback.ErrNoOutput, Msg: scrollback.ErrNoOutput.Error() + ": " + quote(ref.ID),
		Hint: present.NothingRetainedHint}
	if s != nil {
		info, err = s.CatRange(ctx, op, ref.ID, 0, -1, &text)
	}
	// The resource is the principal's, not only the session's (the
	// contract's "to the principal that owns it"): a copy another of the
	// owner's sessions holds is read there. Any other miss keeps the
	// session's own error, so another owner's copy reads as one never
	// made.
	if errors.Is(err, scrollback.ErrNoOutput) {
		if holder, ferr := b.eng.CopySession(ctx, b.owner, ref.ID); ferr == nil && (s == nil || holder.ID() != s.ID()) {
			text.Reset()
			info, err = holder.CatRange(ctx, op, ref.ID, 0, -1, &text)
			if s == nil {
				s = holder
			}
		}
	}
	if err != nil {
		return nil, ResourceError(uri, err)
	}
	return &mcp.ReadResourceResult{
		Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text.String()}},
		Meta:     mcp.Meta{MetaSession: s.ID(), MetaTotalBytes: info.TotalBytes, MetaComplete: info.Complete},
	}, nil
}

// ResourceError is the JSON-RPC error of a resources/read that failed:
// invalid params (-32602), which the MCP specification gives a resource
// not found (SEP-2164), for a copy that cannot be read, with the URI (when
// not empty: a prompts/get has none) and the error's kind (not_found,
// evicted) in its data; an internal error (-32603) when the store is
// unavailable.
func ResourceError(uri string, err error) error {
	kind := scrollback.ErrorKind(err)
	code := int64(jsonrpc.CodeInvalidParams)
	if kind == scrollback.KindUnavailable {
		code = jsonrpc.CodeInternalError
	}
	d := map[string]string{MetaErrorKind: kind}
	if uri != "" {
		d["uri"] = uri
	}
	data, _ := json.Marshal(d)
	return &jsonrpc.Error{Code: code, Message: err.Error(), Data: data}
}
