package scrollback_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestInputFieldsDocumented: every field of the tool inputs a Go caller
// fills in has a doc comment (units, default, what the zero value means),
// so that `go doc` answers what the JSON schema's few words cannot.
func TestInputFieldsDocumented(t *testing.T) {
	want := map[string]bool{"RunCommandInput": true, "RunCodeInput": true}
	fset := token.NewFileSet()
	for _, file := range []string{"command.go", "code.go"} {
		f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !want[ts.Name.Name] {
				return true
			}
			delete(want, ts.Name.Name)
			for _, field := range ts.Type.(*ast.StructType).Fields.List {
				doc := strings.TrimSpace(field.Doc.Text() + field.Comment.Text())
				for _, name := range field.Names {
					if len(doc) < 20 {
						t.Errorf("%s.%s has no doc comment saying what it holds and what its zero value means", ts.Name.Name, name.Name)
					}
				}
			}
			return false
		})
	}
	for name := range want {
		t.Errorf("type %s not found", name)
	}
}

// TestExportedFieldsDocumented: every exported field of the package's
// exported structs, of filepager.Page (read_file's result, FilePage) and of
// store.Session and store.CopyInfo (what ListSessions and Copies return)
// has a doc or line comment, so that go doc answers what a field holds
// (read_file's nextLine at the end of a file, say) without the source.
func TestExportedFieldsDocumented(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	// The store types the root package returns (ListSessions, Copies, Cat).
	files = append(files, filepath.Join("filepager", "filepager.go"), filepath.Join("store", "store.go"))
	only := map[string]string{filepath.Join("filepager", "filepager.go"): "Page", filepath.Join("store", "store.go"): "Session CopyInfo"}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !ts.Name.IsExported() {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok || only[file] != "" && !slices.Contains(strings.Fields(only[file]), ts.Name.Name) {
				return false
			}
			for _, field := range st.Fields.List {
				if strings.TrimSpace(field.Doc.Text()+field.Comment.Text()) != "" {
					continue
				}
				for _, name := range field.Names {
					if name.IsExported() {
						t.Errorf("%s: %s.%s has no doc comment", file, ts.Name.Name, name.Name)
					}
				}
			}
			return false
		})
	}
}
