package present

// Retained copies as MCP resources, and results that point at them: the
// shape of the resource_link block a result carries, the resource
// template's words, and the words of a reference the proxy cannot
// resolve. The MCP server turns Link into the SDK's block; present itself
// stays free of the SDK, so that the engine's packages can use it.

// OutputURIPrefix starts the URI of every retained copy:
// scrollback://output/ID.
const OutputURIPrefix = "scrollback://output/"

// OutputURITemplate is the resource template of the retained copies, as
// resources/templates/list shows it.
const OutputURITemplate = OutputURIPrefix + "{id}"

// OutputURI is the URI of retained copy id.
func OutputURI(id string) string { return OutputURIPrefix + id }

// Link is a resource_link content block: what a result that retained a
// copy carries after its text blocks, so that a client that reads
// resources gets the whole copy without the model paging it.
type Link struct {
	URI      string
	Name     string
	MIMEType string
	Size     int64
}

// OutputLink is the Link of retained copy id of totalBytes bytes: its URI,
// its id as name, text/plain, its size.
func OutputLink(id string, totalBytes int64) Link {
	return Link{URI: OutputURI(id), Name: id, MIMEType: "text/plain", Size: totalBytes}
}

// The resource template of the retained copies.
const (
	OutputTemplateName  = "retained_output"
	OutputTemplateTitle = "Retained tool output"
	OutputTemplateDoc   = "The whole text of a retained copy of this session, by its output_id (a result that retained one links to it)."
)

// NothingRetainedHint is the hint of a not_found error for a session that
// has retained nothing yet.
const NothingRetainedHint = "this session has retained nothing yet"

// RefIncomplete is the error of a reference to a copy with complete=false
// that does not end in #allow-incomplete.
const RefIncomplete = Incomplete + ", so the tool would get less than the whole result; end the reference with #allow-incomplete to pass it anyway"

// BareIDHint is the hint of the not_found error for a copy's resource URI
// given where its output_id is wanted (read_tool_output and the other
// readers take the bare id): id is the one the URI names.
func BareIDHint(id string) string {
	return `that is a resource URI, not an output_id: pass the bare id, "` + id + `"`
}
