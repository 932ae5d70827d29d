package codemode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/scrollback-dev/scrollback/present"
)

// Describe declares the tools a script can call as TypeScript, generated
// from their JSON Schemas, the way models expect a tool API to look:
//
//	declare const tools: {
//	  // Run a shell command.
//	  run_command(input: { command: string; cwd?: string }): Promise<{ preview: string; output_id?: string; ... }>;
//	};
//
// It declares types, not prose: a tool's description, when it has one,
// becomes a one-line comment (its first sentence, cut at the end of a word
// when longer than a line, never inside one), and the properties' own
// descriptions are left out (a client lists them with the tools). Each
// input and each output schema is one object type on the tool's line: a
// named result type cost its name twice and a line, about 45 bytes a tool
// in a description sent with every request. A tool without an output schema returns
// Promise<any>. Object properties not listed in "required" are optional
// (name?), arrays are T[], enums unions of literals, a map an index
// signature; a schema it cannot read, or nested deeper than a few levels,
// is any; an optional property's type leaves out null. Tools named
// run_code are left out: a script cannot call them.
func Describe(tools []Tool) string {
	var b strings.Builder
	b.WriteString("declare const tools: {\n")
	for _, t := range tools {
		if t.Name == Name || t.Name == "" {
			continue
		}
		if d := toolComment(t.Description); d != "" {
			fmt.Fprintf(&b, "  // %s\n", d)
		}
		name := t.Name
		if !identifier().MatchString(name) {
			name = fmt.Sprintf("%q", name)
		}
		in := printer{b: &b, inline: true}
		fmt.Fprintf(&b, "  %s(input: ", name)
		in.schema(t.InputSchema)
		b.WriteString("): Promise<")
		if len(bytes.TrimSpace(t.OutputSchema)) > 0 {
			out := printer{b: &b, inline: true}
			out.schema(t.OutputSchema)
		} else {
			b.WriteString("any")
		}
		b.WriteString(">;\n")
	}
	b.WriteString("};\n")
	return b.String()
}

// maxToolComment bounds a tool's comment in Describe.
const maxToolComment = 120

// toolComment is a tool's description as Describe's one-line comment: its
// first sentence, at most maxToolComment bytes, cut (present.Clip) at the
// end of a word when it is longer.
func toolComment(desc string) string {
	s := oneLine(desc)
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return present.Clip(s, maxToolComment)
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

// identifier matches a JavaScript identifier name; compiled on first use,
// not at start-up.
var identifier = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`) })

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
			p.write(optional(prop.schema, required[prop.name]), depth+1)
		}
		b.WriteString(" }")
		return
	}
	indent := strings.Repeat("  ", p.indent+depth+1)
	b.WriteString("{\n")
	for _, prop := range s.Properties {
		b.WriteString(indent)
		p.writeName(prop.name, required[prop.name])
		p.write(optional(prop.schema, required[prop.name]), depth+1)
		b.WriteString(";")
		if d := present.Clip(oneLine(prop.schema.Description), maxPropertyComment); p.comments && depth == 0 && d != "" {
			fmt.Fprintf(b, " // %s", d)
		}
		b.WriteString("\n")
	}
	b.WriteString(strings.Repeat("  ", p.indent+depth))
	b.WriteString("}")
}

// maxPropertyComment bounds a property's comment in TypeScript.
const maxPropertyComment = 80

// optional is a property's schema as its type is written: an optional
// property's leaves out null, since optional already says it may be left
// out ("limit?: number", not "limit?: null | number").
func optional(ps *jsonSchema, required bool) *jsonSchema {
	if required || len(ps.Type) < 2 || !slices.Contains(ps.Type, "null") {
		return ps
	}
	c := *ps
	c.Type = slices.DeleteFunc(slices.Clone(ps.Type), func(t string) bool { return t == "null" })
	return &c
}

// writeName writes "name: " or "name?: ", quoting a name that is not an
// identifier.
func (p printer) writeName(name string, required bool) {
	if !identifier().MatchString(name) {
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
