package wrap

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// Real-looking configurations of each client, with fields the wrapper
// does not know, which must survive.
var configs = []struct {
	client string
	opts   Options
	in     string
	want   string // the wrapped file
}{
	{"Claude Code .mcp.json", Options{}, `{
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}
    },
    "linear": {
      "type": "http",
      "url": "https://mcp.linear.app/mcp",
      "headers": {"Authorization": "Bearer ${LINEAR_KEY}"}
    },
    "legacy": {"type": "sse", "url": "https://example.com/sse"}
  },
  "x-unknown": [1, 2, {"keep": true}]
}
`, `{
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "scrollback",
      "args": [
        "proxy",
        "--",
        "npx",
        "-y",
        "@modelcontextprotocol/server-github"
      ],
      "env": {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"
      }
    },
    "linear": {
      "type": "stdio",
      "command": "scrollback",
      "args": [
        "proxy",
        "--url",
        "https://mcp.linear.app/mcp"
      ],
      "env": {
        "SCROLLBACK_PROXY_HEADERS": "Authorization: Bearer ${LINEAR_KEY}"
      },
      "x-scrollback-original": {
        "type": "http",
        "url": "https://mcp.linear.app/mcp",
        "headers": {
          "Authorization": "Bearer ${LINEAR_KEY}"
        }
      }
    },
    "legacy": {
      "type": "sse",
      "url": "https://example.com/sse"
    }
  },
  "x-unknown": [
    1,
    2,
    {
      "keep": true
    }
  ]
}
`},
	{"Claude Code ~/.claude.json", Options{}, `{
  "numStartups": 42,
  "mcpServers": {"fs": {"command": "mcp-server-filesystem", "args": ["/data"]}},
  "projects": {
    "/home/me/app": {"allowedTools": [], "mcpServers": {"db": {"command": "uvx", "args": ["mcp-server-sqlite", "--db-path", "app.db"]}}, "hasTrustDialogAccepted": true},
    "/home/me/other": {"mcpServers": {}}
  },
  "oauthAccount": {"emailAddress": "me@example.com"}
}
`, `{
  "numStartups": 42,
  "mcpServers": {
    "fs": {
      "command": "scrollback",
      "args": [
        "proxy",
        "--",
        "mcp-server-filesystem",
        "/data"
      ]
    }
  },
  "projects": {
    "/home/me/app": {
      "allowedTools": [],
      "mcpServers": {
        "db": {
          "command": "scrollback",
          "args": [
            "proxy",
            "--",
            "uvx",
            "mcp-server-sqlite",
            "--db-path",
            "app.db"
          ]
        }
      },
      "hasTrustDialogAccepted": true
    },
    "/home/me/other": {
      "mcpServers": {}
    }
  },
  "oauthAccount": {
    "emailAddress": "me@example.com"
  }
}
`},
	{"Claude Desktop", Options{}, `{
	"mcpServers": {
		"filesystem": {
			"command": "npx",
			"args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]
		},
		"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
	},
	"globalShortcut": "Ctrl+Space"
}
`, `{
	"mcpServers": {
		"filesystem": {
			"command": "scrollback",
			"args": [
				"proxy",
				"--",
				"npx",
				"-y",
				"@modelcontextprotocol/server-filesystem",
				"/Users/me/Desktop"
			]
		},
		"memory": {
			"command": "scrollback",
			"args": [
				"proxy",
				"--",
				"npx",
				"-y",
				"@modelcontextprotocol/server-memory"
			]
		}
	},
	"globalShortcut": "Ctrl+Space"
}
`},
	{"Cursor", Options{}, `{
  "mcpServers": {
    "postgres": {"command": "docker", "args": ["run", "-i", "--rm", "mcp/postgres", "postgresql://host/db"]},
    "remote": {"url": "http://localhost:3000/mcp"}
  }
}
`, `{
  "mcpServers": {
    "postgres": {
      "command": "scrollback",
      "args": [
        "proxy",
        "--",
        "docker",
        "run",
        "-i",
        "--rm",
        "mcp/postgres",
        "postgresql://host/db"
      ]
    },
    "remote": {
      "command": "scrollback",
      "args": [
        "proxy",
        "--url",
        "http://localhost:3000/mcp"
      ],
      "x-scrollback-original": {
        "url": "http://localhost:3000/mcp"
      }
    }
  }
}
`},
	{"VS Code .vscode/mcp.json", Options{}, `{
  "inputs": [{"type": "promptString", "id": "token", "description": "API token", "password": true}],
  "servers": {
    "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"], "envFile": "${workspaceFolder}/.env"},
    "api": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${input:token}"}}
  }
}
`, `{
  "inputs": [
    {
      "type": "promptString",
      "id": "token",
      "description": "API token",
      "password": true
    }
  ],
  "servers": {
    "fetch": {
      "type": "stdio",
      "command": "scrollback",
      "args": [
        "proxy",
        "--",
        "uvx",
        "mcp-server-fetch"
      ],
      "envFile": "${workspaceFolder}/.env"
    },
    "api": {
      "type": "stdio",
      "command": "scrollback",
      "args": [
        "proxy",
        "--url",
        "https://api.example.com/mcp"
      ],
      "env": {
        "SCROLLBACK_PROXY_HEADERS": "Authorization: Bearer ${input:token}"
      },
      "x-scrollback-original": {
        "type": "http",
        "url": "https://api.example.com/mcp",
        "headers": {
          "Authorization": "Bearer ${input:token}"
        }
      }
    }
  }
}
`},
	{"VS Code settings.json", Options{}, `{
  "editor.fontSize": 14,
  "mcp": {"servers": {"git": {"command": "uvx", "args": ["mcp-server-git"]}}}
}
`, `{
  "editor.fontSize": 14,
  "mcp": {
    "servers": {
      "git": {
        "command": "scrollback",
        "args": [
          "proxy",
          "--",
          "uvx",
          "mcp-server-git"
        ]
      }
    }
  }
}
`},
	{"Windsurf", Options{}, `{
  "mcpServers": {
    "brave": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-brave-search"], "env": {"BRAVE_API_KEY": "k"}, "disabled": false},
    "figma": {"serverUrl": "https://figma.example.com/mcp"}
  }
}
`, `{
  "mcpServers": {
    "brave": {
      "command": "scrollback",
      "args": [
        "proxy",
        "--",
        "npx",
        "-y",
        "@modelcontextprotocol/server-brave-search"
      ],
      "env": {
        "BRAVE_API_KEY": "k"
      },
      "disabled": false
    },
    "figma": {
      "command": "scrollback",
      "args": [
        "proxy",
        "--url",
        "https://figma.example.com/mcp"
      ],
      "x-scrollback-original": {
        "serverUrl": "https://figma.example.com/mcp"
      }
    }
  }
}
`},
	{"Gemini CLI", Options{Gemini: true}, `{
  "theme": "GitHub",
  "mcpServers": {
    "py": {"command": "python", "args": ["-m", "my_server"], "cwd": "./srv", "timeout": 30000, "trust": false},
    "sse": {"url": "http://localhost:8080/sse"},
    "http": {"httpUrl": "http://localhost:8080/mcp", "headers": {"X-Key": "v"}, "timeout": 5000}
  }
}
`, `{
  "theme": "GitHub",
  "mcpServers": {
    "py": {
      "command": "scrollback",
      "args": [
        "proxy",
        "--",
        "python",
        "-m",
        "my_server"
      ],
      "cwd": "./srv",
      "timeout": 30000,
      "trust": false
    },
    "sse": {
      "url": "http://localhost:8080/sse"
    },
    "http": {
      "command": "scrollback",
      "args": [
        "proxy",
        "--url",
        "http://localhost:8080/mcp"
      ],
      "env": {
        "SCROLLBACK_PROXY_HEADERS": "X-Key: v"
      },
      "timeout": 5000,
      "x-scrollback-original": {
        "httpUrl": "http://localhost:8080/mcp",
        "headers": {
          "X-Key": "v"
        },
        "timeout": 5000
      }
    }
  }
}
`},
}

// canon is a JSON document re-indented, keys in their order.
func canon(t *testing.T, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, b)
	}
	return strings.TrimSpace(out.String())
}

func TestWrapClients(t *testing.T) {
	for _, c := range configs {
		t.Run(c.client, func(t *testing.T) {
			res, err := Wrap([]byte(c.in), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Out) != c.want {
				t.Errorf("wrapped:\n%s\nwant:\n%s", res.Out, c.want)
			}
			// Idempotent: wrapping again changes nothing.
			again, err := Wrap(res.Out, c.opts)
			if err != nil || again.Changed || !bytes.Equal(again.Out, res.Out) {
				t.Errorf("wrapping twice changed the file (%v):\n%s", err, again.Out)
			}
			// Unwrap restores every entry exactly, keys in their order.
			back, err := Unwrap(res.Out, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := canon(t, back.Out), canon(t, []byte(c.in)); got != want {
				t.Errorf("unwrapped:\n%s\nwant the original:\n%s", got, want)
			}
			// Unwrapping what is not wrapped changes nothing.
			if plain, err := Unwrap([]byte(c.in), c.opts); err != nil || plain.Changed {
				t.Errorf("unwrapping an unwrapped file changed it (%v)", err)
			}
		})
	}
}

func TestWrapReportsEachServer(t *testing.T) {
	res, err := Wrap([]byte(configs[0].in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{Path: "mcpServers.github", Action: "wrapped"},
		{Path: "mcpServers.linear", Action: "wrapped"},
		{Path: "mcpServers.legacy", Action: "skipped", Reason: "it uses the SSE transport, which the proxy does not speak (streamable HTTP only)"},
	}
	if len(res.Changes) != len(want) {
		t.Fatalf("changes %+v", res.Changes)
	}
	for i := range want {
		if res.Changes[i] != want[i] {
			t.Errorf("change %d: %+v, want %+v", i, res.Changes[i], want[i])
		}
	}
}

func TestWrapErrors(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"not JSON", `{"mcpServers": `, "not a JSON object"},
		{"an array", `[1]`, "not a JSON object"},
		{"no servers", `{"theme": "dark"}`, "no MCP servers found"},
		{"servers not an object", `{"mcpServers": [1]}`, "mcpServers is not an object of servers"},
		{"comments", "{\n// a comment\n\"mcpServers\": {}}", "not a JSON object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Wrap([]byte(c.in), Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestWrapCustomCommand(t *testing.T) {
	in := `{"mcpServers": {"a": {"command": "srv"}}}`
	res, err := Wrap([]byte(in), Options{Command: "/opt/bin/scrollback"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Out), `"command": "/opt/bin/scrollback"`) {
		t.Errorf("the command is not the one asked for:\n%s", res.Out)
	}
	back, _ := Unwrap(res.Out, Options{Command: "/opt/bin/scrollback"})
	if canon(t, back.Out) != canon(t, []byte(in)) {
		t.Errorf("unwrapped:\n%s", back.Out)
	}
}

func TestDiff(t *testing.T) {
	a := []byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n")
	b := []byte("1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\n")
	want := "--- a\n+++ b\n@@ -2,9 +2,10 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n 9\n 10\n+11\n"
	if got := Diff(a, b, "a", "b"); got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
	if Diff(a, a, "a", "b") != "" {
		t.Error("equal texts have a diff")
	}
}
