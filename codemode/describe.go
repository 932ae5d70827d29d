package codemode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Describe lists the tools a script can call, one TypeScript-style
// declaration each, generated from their JSON Schemas:
//
//	// Run a shell command.
//	tools.run_command(args: {
//	  // the shell command
//	  command: string;
//	  cwd?: string;
//	}): { preview: string; output_id?: string; ... }
//
// Object properties not listed in "required" are optional (name?), arrays
// are T[], enums unions of literals, a map an index signature; a schema it
// cannot read, or nested deeper than a few levels, is any. Tools named
// run_code are left out: a script cannot call them.
func Describe(tools []Tool) string {
	var b strings.Builder
	for i, t := range tools {
		if t.Name == Name || t.Name == "" {
			continue
		}
		if i > 0 && b.Len() > 0 {
			b.WriteByte('\n')
		}
		if d := oneLine(t.Description); d != "" {
			fmt.Fprintf(&b, "// %s\n", d)
		}
		fmt.Fprintf(&b, "tools.%s(args: %s): %s;\n", t.Name, TypeScript(t.InputSchema), TypeScript(t.OutputSchema))
	}
	return b.String()
}

// TypeScript renders a JSON Schema as a TypeScript type, as Describe does;
// "any" for an empty or unreadable schema.
func TypeScript(schema json.RawMessage) string {
	if len(bytes.TrimSpace(schema)) == 0 {
		return "any"
	}
	var s jsonSchema
	if err := json.Unmarshal(schema, &s); err != nil {
		return "any"
	}
	var b strings.Builder
	s.write(&b, 0)
	return b.String()
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

func (s *jsonSchema) write(b *strings.Builder, depth int) {
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
			a.write(b, depth+1)
		}
		return
	}
	if len(s.Type) == 0 {
		if len(s.Properties) > 0 {
			s.writeObject(b, depth)
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
			s.Items.write(&item, depth+1)
			if it := item.String(); strings.ContainsAny(it, "|&") && !strings.HasPrefix(it, "{") {
				fmt.Fprintf(b, "(%s)[]", it)
			} else {
				fmt.Fprintf(b, "%s[]", it)
			}
		case "object":
			s.writeObject(b, depth)
		default:
			b.WriteString("any")
		}
	}
}

var identifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func (s *jsonSchema) writeObject(b *strings.Builder, depth int) {
	if len(s.Properties) == 0 {
		if ap := bytes.TrimSpace(s.AdditionalProperties); len(ap) > 0 && ap[0] == '{' {
			var v jsonSchema
			if json.Unmarshal(ap, &v) == nil {
				b.WriteString("{ [key: string]: ")
				v.write(b, depth+1)
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
	indent := strings.Repeat("  ", depth+1)
	b.WriteString("{\n")
	for _, p := range s.Properties {
		if d := oneLine(p.schema.Description); d != "" {
			fmt.Fprintf(b, "%s// %s\n", indent, d)
		}
		name := p.name
		if !identifier.MatchString(name) {
			name = fmt.Sprintf("%q", name)
		}
		b.WriteString(indent)
		b.WriteString(name)
		if !required[p.name] {
			b.WriteByte('?')
		}
		b.WriteString(": ")
		p.schema.write(b, depth+1)
		b.WriteString(";\n")
	}
	b.WriteString(strings.Repeat("  ", depth))
	b.WriteString("}")
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
