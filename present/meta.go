package present

// The _meta keys of MCP results. Every tool result scrollback makes carries
// MetaSession; a tool error carries MetaErrorKind; a result the proxy
// previewed (and a resource or prompt text it previewed) carries its
// recovery reference under MetaOutputID, MetaTotalBytes, MetaComplete and
// MetaRecovery.
const (
	MetaSession    = "scrollback/session"    // the id of the session the call acted on
	MetaErrorKind  = "scrollback/error_kind" // a tool error's kind: not_found, evicted, offset, argument, sensitive, unavailable
	MetaOutputID   = "scrollback/output_id"  // the copy's id, for read_tool_output
	MetaTotalBytes = "scrollback/totalBytes" // the copy's length
	MetaComplete   = "scrollback/complete"   // whether the copy holds the whole text
	MetaRecovery   = "scrollback/recovery"   // "available" or "unavailable"
)

// RetainedMeta is the _meta of a previewed result: the session holding its
// copy, the copy's length and state, and its id when one was saved. It is
// a map[string]any, the type of mcp.Meta.
func RetainedMeta(session, outputID string, totalBytes int64, complete bool, recovery string) map[string]any {
	m := map[string]any{MetaTotalBytes: totalBytes, MetaComplete: complete, MetaRecovery: recovery}
	if session != "" {
		m[MetaSession] = session
	}
	if outputID != "" {
		m[MetaOutputID] = outputID
	}
	return m
}

// MergeMeta adds src to *dst (making it when nil; an mcp.Meta or any
// map[string]any) unless *dst already holds
// a recovery reference: in a result with several previewed parts, the
// first one's stands.
func MergeMeta[M ~map[string]any](dst *M, src map[string]any) {
	if *dst == nil {
		*dst = M{}
	}
	if _, ok := (*dst)[MetaOutputID]; ok {
		return
	}
	for k, v := range src {
		(*dst)[k] = v
	}
}

// SetMeta sets key to v in *dst, making it when nil.
func SetMeta[M ~map[string]any](dst *M, key string, v any) {
	if *dst == nil {
		*dst = M{}
	}
	(*dst)[key] = v
}

// ErrorJSON is a failure as the CLI prints it with --json:
// {"error": {"kind": KIND, "message": MESSAGE}}.
type ErrorJSON struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is the inside of ErrorJSON.
type ErrorBody struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Failure returns the CLI's --json form of a failure of kind with msg.
func Failure(kind, msg string) ErrorJSON {
	return ErrorJSON{Error: ErrorBody{Kind: kind, Message: msg}}
}
