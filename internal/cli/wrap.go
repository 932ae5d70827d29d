package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/scrollback-dev/scrollback/internal/wrap"
)

func init() {
	register(commandInfo{name: "wrap", order: 86,
		usage:   "wrap [--dry-run] [--unwrap] [--command PATH] [--gemini] FILE",
		summary: "put every MCP server of a client's JSON configuration behind scrollback proxy (or, with --unwrap, take them out again)",
		examples: []example{
			{"show what wrapping Claude Code's project servers would change", "scrollback wrap --dry-run .mcp.json"},
			{"put every Cursor server behind the proxy (a backup is written first)", "scrollback wrap ~/.cursor/mcp.json"},
			{"take the proxy out again", "scrollback wrap --unwrap .vscode/mcp.json"},
		},
		make: func(io IO) command { return &wrapCmd{base: base{io: io}} }})
}

// wrapCmd is `scrollback wrap`: rewrite an MCP client's configuration.
type wrapCmd struct {
	base
	dryRun, unwrap, gemini bool
	command                string
}

func (c *wrapCmd) Run(ctx context.Context, args []string) error {
	fs := c.flags("wrap", false, false)
	fs.BoolVar(&c.dryRun, "dry-run", false, "print the changes as a diff and write nothing (default: write them, after a backup)")
	fs.BoolVar(&c.unwrap, "unwrap", false, "restore the servers wrapped before (default: wrap)")
	fs.StringVar(&c.command, "command", "scrollback", "how the client should start scrollback: a `PATH` or a name on its PATH (default scrollback)")
	fs.BoolVar(&c.gemini, "gemini", false, `read FILE as Gemini CLI settings, where "url" means SSE (default: when FILE is under .gemini/)`)
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give one configuration file, e.g. scrollback wrap .mcp.json (Claude Code), ~/.cursor/mcp.json (Cursor), .vscode/mcp.json (VS Code)")
	}
	path := pos[0]
	in, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	opts := wrap.Options{Command: c.command, Gemini: c.gemini || strings.Contains(filepath.ToSlash(path), "/.gemini/") || strings.HasPrefix(filepath.ToSlash(path), ".gemini/")}
	f := wrap.Wrap
	if c.unwrap {
		f = wrap.Unwrap
	}
	res, err := f(in, opts)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, ch := range res.Changes {
		line := ch.Path + ": " + ch.Action
		if ch.Reason != "" {
			line += " (" + ch.Reason + ")"
		}
		fmt.Fprintln(c.io.Stderr, line)
	}
	if !res.Changed {
		fmt.Fprintf(c.io.Stderr, "%s: nothing to change\n", path)
		return nil
	}
	if c.dryRun {
		fmt.Fprint(c.io.Stdout, wrap.Diff(in, res.Out, path, path+" (wrapped)"))
		return nil
	}
	backup, err := writeBackup(path, in)
	if err != nil {
		return fmt.Errorf("cannot write a backup of %s, so it was left unchanged: %w", path, err)
	}
	if err := replaceFile(path, res.Out); err != nil {
		return err
	}
	fmt.Fprintf(c.io.Stderr, "%s: rewritten; the original is in %s\n", path, backup)
	return nil
}

// writeBackup saves data next to path as PATH.scrollback-backup (or
// .scrollback-backup.N when that exists already) and returns its name.
func writeBackup(path string, data []byte) (string, error) {
	name := path + ".scrollback-backup"
	for i := 1; ; i++ {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if os.IsExist(err) {
			name = fmt.Sprintf("%s.scrollback-backup.%d", path, i)
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return name, err
	}
}

// replaceFile writes data to path through a temporary file renamed over
// it, keeping its mode, so that a crash never leaves half a file.
func replaceFile(path string, data []byte) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(st.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
