package codemode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/scrollback-dev/scrollback/internal/utf8x"
)

// Describe declares the tools a script can call as TypeScript, generated
// from their JSON Schemas, the way models expect a tool API to look:
//
//	declare const tools: {
//	  // Run a shell command.
//	  run_command(input: {
//	    command: string; // the shell command
//	    cwd?: string;
//	  }): Promise<RunCommandResult>;
//	};
//	type RunCommandResult = { preview: string; output_id?: string; ... };
//
// Each input is written out with its properties' descriptions (cut short,
// each given once; an optional property's type leaves out null);
// each output schema becomes a named result type on one line, without
// descriptions, to keep the declaration short. A tool without an output
// schema returns Promise<any>. Object properties not listed in "required"
// are optional (name?), arrays are T[], enums unions of literals, a map an
// index signature; a schema it cannot read, or nested deeper than a few
// levels, is any. Tools named run_code are left out: a script cannot call
// them.
func Describe(tools []Tool) string {
	var b, results strings.Builder
	seen := map[string]bool{} // a property comment is given once
	b.WriteString("declare const tools: {\n")
	for _, t := range tools {
		if t.Name == Name || t.Name == "" {
			continue
		}
		if d := cutComment(t.Description, maxToolComment); d != "" {
			fmt.Fprintf(&b, "  // %s\n", d)
		}
		name := t.Name
		if !identifier.MatchString(name) {
			name = fmt.Sprintf("%q", name)
		}
		in := printer{b: &b, comments: true, indent: 1, seen: seen}
		fmt.Fprintf(&b, "  %s(input: ", name)
		in.schema(t.InputSchema)
		out := "any"
		if len(bytes.TrimSpace(t.OutputSchema)) > 0 {
			out = resultName(t.Name)
			fmt.Fprintf(&results, "type %s = ", out)
			p := printer{b: &results, inline: true}
			p.schema(t.OutputSchema)
			results.WriteString(";\n")
		}
		fmt.Fprintf(&b, "): Promise<%s>;\n", out)
	}
	b.WriteString("};\n")
	b.WriteString(results.String())
	return b.String()
}

// Lengths at which Describe cuts a tool's and a property's description.
const (
	maxToolComment     = 90
	maxPropertyComment = 46
)

// resultName names a tool's result type: run_command -> RunCommandResult.
func resultName(tool string) string {
	var b strings.Builder
	up := true
	for _, r := range tool {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ':
			up = true
		case (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '$':
			if up && r >= 'a' && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteRune(r)
			up = false
		}
	}
	if b.Len() == 0 || (b.String()[0] >= '0' && b.String()[0] <= '9') {
		return "Tool" + b.String() + "Result"
	}
	return b.String() + "Result"
}

// cutComment folds s onto one line and cuts it to at most n bytes, at a
// character boundary and, when it can, at the end of a sentence or clause.
func cutComment(s string, n int) string {
	s = oneLine(s)
	if len(s) <= n {
		return s
	}
	s = s[:utf8x.CutEnd([]byte(s), n-3, true)]
	if i := max(strings.LastIndex(s, ". "), strings.LastIndex(s, "; "), strings.LastIndex(s, " ("), strings.LastIndex(s, ", ")); i > n/2 &&
		!strings.HasSuffix(s[:i], "e.g") && !strings.HasSuffix(s[:i], "i.e") {
		return s[:i]
	}
	return strings.TrimRight(s, " ,") + "..."
}

// TypeScript renders a JSON Schema as a TypeScript type, as Describe does
// for a tool's input; "any" for an empty or unreadable schema.
func TypeScript(schema json.RawMessage) string {
	var b strings.Builder
	p := printer{b: &b, comments: true}
	p.schema(schema)
	return b.String()
}

// printer writes JSON Schemas as TypeScript: objects one property a line
// (indented by indent levels, top-level descriptions as comments when
// comments is set), or all on one line when inline is set.
type printer struct {
	b        *strings.Builder
	inline   bool
	comments bool
	indent   int
	seen     map[string]bool // comments already given, when not nil: each is given once
}

func (p printer) schema(schema json.RawMessage) {
	if len(bytes.TrimSpace(schema)) == 0 {
		p.b.WriteString("any")
		return
	}
	var s jsonSchema
	if err := json.Unmarshal(schema, &s); err != nil {
		p.b.WriteString("any")
		return
	}
	p.write(&s, 0)
}

// maxDepth bounds how deep TypeScript follows nested schemas.
const maxDepth = 6

// jsonSchema is the part of JSON Schema that TypeScript reads. Properties
// keep their order from the document.
type jsonSchema struct {
	Type                 schemaType      `json:"type"`
	Description          string          `json:"description"`
	Properties           properties      `json:"properties"`
	Required             []string        `json:"required"`
	Items                *jsonSchema     `json:"items"`
	Enum                 []any           `json:"enum"`
	Const                *any            `json:"const"`
	AnyOf                []*jsonSchema   `json:"anyOf"`
	OneOf                []*jsonSchema   `json:"oneOf"`
	AdditionalProperties json.RawMessage `json:"additionalProperties"`
}

// schemaType is "type": one name or a list of names.
type schemaType []string

func (t *schemaType) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*t = schemaType{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return nil // unreadable: any
	}
	*t = many
	return nil
}

type property struct {
	name   string
	schema *jsonSchema
}

// properties keeps the order properties appear in.
type properties []property

func (p *properties) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil // not an object: no properties
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		var s jsonSchema
		if err := dec.Decode(&s); err != nil {
			return err
		}
		*p = append(*p, property{name, &s})
	}
	return nil
}

func (p printer) write(s *jsonSchema, depth int) {
	b := p.b
	if s == nil || depth > maxDepth {
		b.WriteString("any")
		return
	}
	switch {
	case s.Const != nil:
		writeLiteral(b, *s.Const)
		return
	case len(s.Enum) > 0:
		for i, v := range s.Enum {
			if i > 0 {
				b.WriteString(" | ")
			}
			writeLiteral(b, v)
		}
		return
	case len(s.AnyOf) > 0 || len(s.OneOf) > 0:
		alts := append(append([]*jsonSchema{}, s.AnyOf...), s.OneOf...)
		for i, a := range alts {
			if i > 0 {
				b.WriteString(" | ")
			}
			p.write(a, depth+1)
		}
		return
	}
	if len(s.Type) == 0 {
		if len(s.Properties) > 0 {
			p.writeObject(s, depth)
			return
		}
		b.WriteString("any")
		return
	}
	for i, t := range s.Type {
		if i > 0 {
			b.WriteString(" | ")
		}
		switch t {
		case "string", "boolean", "null":
			b.WriteString(t)
		case "number", "integer":
			b.WriteString("number")
		case "array":
			var item strings.Builder
			ip := p
			ip.b = &item
			ip.write(s.Items, depth+1)
			if it := item.String(); strings.ContainsAny(it, "|&") && !strings.HasPrefix(it, "{") {
				fmt.Fprintf(b, "(%s)[]", it)
			} else {
				fmt.Fprintf(b, "%s[]", it)
			}
		case "object":
			p.writeObject(s, depth)
		default:
			b.WriteString("any")
		}
	}
}

var identifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func (p printer) writeObject(s *jsonSchema, depth int) {
	b := p.b
	if len(s.Properties) == 0 {
		if ap := bytes.TrimSpace(s.AdditionalProperties); len(ap) > 0 && ap[0] == '{' {
			var v jsonSchema
			if json.Unmarshal(ap, &v) == nil {
				b.WriteString("{ [key: string]: ")
				p.write(&v, depth+1)
				b.WriteString(" }")
				return
			}
		}
		b.WriteString("{ [key: string]: any }")
		return
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	if p.inline {
		b.WriteString("{ ")
		for i, prop := range s.Properties {
			if i > 0 {
				b.WriteString("; ")
			}
			p.writeName(prop.name, required[prop.name])
			p.write(prop.schema, depth+1)
		}
		b.WriteString(" }")
		return
	}
	indent := strings.Repeat("  ", p.indent+depth+1)
	b.WriteString("{\n")
	for _, prop := range s.Properties {
		b.WriteString(indent)
		p.writeName(prop.name, required[prop.name])
		ps := prop.schema
		if !required[prop.name] && len(ps.Type) > 1 && slices.Contains(ps.Type, "null") {
			// Optional already says it may be left out: "limit?: number",
			// not "limit?: null | number".
			c := *ps
			c.Type = slices.DeleteFunc(slices.Clone(ps.Type), func(t string) bool { return t == "null" })
			ps = &c
		}
		p.write(ps, depth+1)
		b.WriteString(";")
		if d := cutComment(prop.schema.Description, maxPropertyComment); p.comments && depth == 0 && d != "" && !p.seen[d] {
			fmt.Fprintf(b, " // %s", d)
			if p.seen != nil {
				p.seen[d] = true
			}
		}
		b.WriteString("\n")
	}
	b.WriteString(strings.Repeat("  ", p.indent+depth))
	b.WriteString("}")
}

// writeName writes "name: " or "name?: ", quoting a name that is not an
// identifier.
func (p printer) writeName(name string, required bool) {
	if !identifier.MatchString(name) {
		name = fmt.Sprintf("%q", name)
	}
	p.b.WriteString(name)
	if !required {
		p.b.WriteByte('?')
	}
	p.b.WriteString(": ")
}

func writeLiteral(b *strings.Builder, v any) {
	j, err := json.Marshal(v)
	if err != nil {
		b.WriteString("any")
		return
	}
	b.Write(j)
}

// oneLine folds a description onto one line, so it stays a // comment.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
