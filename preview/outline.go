package preview

import "strings"

// QueryTool is the name of the tool the footer names for querying a
// retained copy that holds JSON.
const QueryTool = "query_tool_output"

// outline writes the footer's lines about a JSON copy: that it can be
// queried with jq rather than paged, and the copy's outline (Footer.Outline),
// which the caller made from the whole data. Nothing when there is no
// outline or no copy to query.
func outline(b *strings.Builder, f Footer) {
	if f.Outline == "" || f.ID == "" {
		return
	}
	b.WriteString("The copy is JSON: run a jq filter on it with ")
	b.WriteString(QueryTool)
	b.WriteString(` {"id":`)
	jsonString(b, f.ID)
	b.WriteString(`,"filter":".key"}, or read a value from its offset. Outline (where each value starts in the copy):`)
	b.WriteByte('\n')
	b.WriteString(f.Outline)
}

// cleanOutline keeps an outline valid UTF-8, its lines free of control
// characters, within OutlineBytes and ending in a newline.
func cleanOutline(s string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var b strings.Builder
	for _, l := range lines {
		l = strings.TrimRight(oneLine("x"+l, OutlineBytes), " ")[1:] // keep the indent
		if b.Len()+len(l)+1 > OutlineBytes {
			break
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}
