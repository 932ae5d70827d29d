package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestServerJSON validates the MCP Registry entry (server.json at the root
// of the repository) against the registry's published schema, vendored in
// testdata with its source (testdata/README.md), and checks what the schema
// cannot: that it names this project's packages and the variables the
// binary reads.
func TestServerJSON(t *testing.T) {
	var schema jsonschema.Schema
	readJSON(t, filepath.Join("testdata", "server.schema.json"), &schema)
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.Fatalf("the vendored schema does not resolve: %v", err)
	}
	var doc map[string]any
	readJSON(t, filepath.Join("..", "..", "server.json"), &doc)
	if err := resolved.Validate(doc); err != nil {
		t.Fatalf("server.json is not valid against %s: %v", schema.ID, err)
	}
	if doc["$schema"] != schema.ID {
		t.Errorf("server.json's $schema is %v, want the vendored schema's id %s", doc["$schema"], schema.ID)
	}

	// A document the schema must refuse, so that the check above is not
	// vacuous: a description over 100 characters and no name.
	bad := map[string]any{"description": strings.Repeat("x", 101), "version": "1.0.0"}
	if err := resolved.Validate(bad); err == nil {
		t.Error("the schema accepted a document without a name: the validation checks nothing")
	}

	var entry struct {
		Version  string `json:"version"`
		Packages []struct {
			RegistryType string `json:"registryType"`
			Identifier   string `json:"identifier"`
			Version      string `json:"version"`
			Transport    struct {
				Type string `json:"type"`
			} `json:"transport"`
			Env []struct {
				Name string `json:"name"`
			} `json:"environmentVariables"`
		} `json:"packages"`
	}
	readJSON(t, filepath.Join("..", "..", "server.json"), &entry)
	seen := map[string]bool{}
	for _, p := range entry.Packages {
		seen[p.RegistryType+" "+p.Transport.Type] = true
		switch p.RegistryType {
		case "npm":
			if p.Identifier != "scrollback" || p.Version != entry.Version {
				t.Errorf("npm package %s@%s, want scrollback@%s", p.Identifier, p.Version, entry.Version)
			}
			var pkg struct {
				Name    string `json:"name"`
				MCPName string `json:"mcpName"`
			}
			readJSON(t, filepath.Join("..", "..", "npm", "scrollback", "package.json"), &pkg)
			if pkg.Name != p.Identifier {
				t.Errorf("npm/scrollback/package.json is %q, server.json names %q", pkg.Name, p.Identifier)
			}
			if name, _ := doc["name"].(string); pkg.MCPName != name {
				t.Errorf("npm/scrollback/package.json's mcpName is %q, want %q (the registry checks it)", pkg.MCPName, name)
			}
		case "oci":
			if want := "ghcr.io/scrollback-dev/scrollback:" + entry.Version; p.Identifier != want {
				t.Errorf("OCI image %s, want %s", p.Identifier, want)
			}
		}
		for _, e := range p.Env {
			if !strings.HasPrefix(e.Name, "SCROLLBACK_") {
				t.Errorf("%s: environment variable %s is not scrollback's", p.RegistryType, e.Name)
			}
		}
	}
	for _, want := range []string{"npm stdio", "oci stdio", "oci streamable-http"} {
		if !seen[want] {
			t.Errorf("server.json has no %s package", want)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
