package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/scrollback-dev/scrollback/internal/wrap"
)

func init() {
	register(commandInfo{name: "wrap", order: 86,
		usage:   "wrap [--dry-run] [--unwrap] [--command PATH] [--gemini] FILE",
		summary: "put every MCP server of a client's configuration (JSON, JSONC or Codex's TOML) behind scrollback proxy (or, with --unwrap, take them out again)",
		examples: []example{
			{"show what wrapping Claude Code's project servers would change", "scrollback wrap --dry-run .mcp.json"},
			{"wrap Codex's servers; comments in the TOML stay", "scrollback wrap ~/.codex/config.toml"},
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
	// wrap opens no database: --db and the quota flags, which it would
	// ignore, are refused.
	fs := c.noDBFlags("wrap")
	fs.BoolVar(&c.dryRun, "dry-run", false, "print the changes as a unified diff and write nothing (default: write them, after a backup)")
	fs.BoolVar(&c.unwrap, "unwrap", false, "restore the servers wrapped before (default: wrap)")
	fs.StringVar(&c.command, "command", "", "how the client should start scrollback: a `PATH`, or a name on the client's PATH (default: the absolute path of this scrollback, since clients such as Claude Desktop do not search the login shell's PATH)")
	fs.BoolVar(&c.gemini, "gemini", false, `read FILE as Gemini CLI settings, where "url" means SSE (default: when FILE is under .gemini/)`)
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give one configuration file, e.g. scrollback wrap .mcp.json (Claude Code), ~/.cursor/mcp.json (Cursor), .vscode/mcp.json (VS Code), ~/.codex/config.toml (Codex)")
	}
	path := pos[0]
	in, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	slash := filepath.ToSlash(path)
	opts := wrap.Options{Command: c.command, Gemini: c.gemini || strings.Contains(slash, "/.gemini/") || strings.HasPrefix(slash, ".gemini/")}
	if strings.EqualFold(filepath.Ext(path), ".toml") {
		opts.Format = wrap.TOML
	}
	if opts.Command == "" && !c.unwrap {
		if opts.Command, err = selfPath(); err != nil {
			return fmt.Errorf("cannot tell where this scrollback is (%v): give its path with --command", err)
		}
		switch {
		case inTempDir(opts.Command):
			fmt.Fprintf(c.io.Stderr, "note: this scrollback runs from a temporary directory (%s), where the client will not find it later (go run?): install it, or give --command\n", opts.Command)
		case strings.Contains(filepath.ToSlash(opts.Command), "/_npx/"):
			fmt.Fprintf(c.io.Stderr, "note: this scrollback runs from npx's cache (%s), which npm may clear: install it (npm install -g scrollback, Homebrew, go install), or give --command\n", opts.Command)
		}
	}
	f := wrap.Wrap
	if c.unwrap {
		f = wrap.Unwrap
	}
	res, err := f(in, opts)
	var we *wrap.Error
	if errors.As(err, &we) {
		return fmt.Errorf("%s:%d:%d: %s", path, we.Line, we.Column, we.Msg)
	}
	if err != nil {
		return fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "wrap: "))
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
		c.io.Stdout.Write(diff.Diff(path, in, path+" (wrapped)", res.Out))
		return nil
	}
	// A configuration kept elsewhere and linked to (dotfiles) is
	// rewritten where it is, and the link stays a link.
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	backup, err := writeBackup(path, in)
	if err != nil {
		return fmt.Errorf("cannot write a backup of %s, so it was left unchanged: %w", path, err)
	}
	if err := replaceFile(target, res.Out); err != nil {
		return err
	}
	through := ""
	if target != path && target != filepath.Clean(path) {
		through = " (through the link, in " + target + ")"
	}
	fmt.Fprintf(c.io.Stderr, "%s: rewritten%s; the original is in %s\n", path, through, backup)
	return nil
}

// selfPath is the absolute path of the running scrollback for a client's
// configuration. When scrollback on PATH is this same binary through a
// link, the link is steadier than the file it points to: Homebrew's
// /opt/homebrew/bin/scrollback stays across upgrades, the versioned Cellar
// path behind it does not.
func selfPath() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		real = exe
	}
	if p, err := exec.LookPath("scrollback"); err == nil {
		if abs, err := filepath.Abs(p); err == nil && sameFile(abs, real) {
			return abs, nil
		}
	}
	return real, nil
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// inTempDir tells whether path is under the system's temporary directory,
// where `go run` builds its binaries.
func inTempDir(path string) bool {
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		tmp = os.TempDir()
	}
	rel, err := filepath.Rel(tmp, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
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
