package filepager

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func off(n int64) *int64 { return &n }

func TestReadPages(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		budget  int
		window  int
		req     Request
		want    Page // TotalBytes is filled in from data
		wantErr error
	}{
		{name: "whole file", data: "abc\ndef\nghi\n",
			want: Page{Text: "abc\ndef\nghi\n", StartLine: 1, EndLine: 3, NextLine: 4, NextByteOffset: 12}},
		{name: "line and limit", data: "abc\ndef\nghi\n", req: Request{Line: 2, Limit: 1},
			want: Page{Text: "def\n", StartLine: 2, EndLine: 2, NextLine: 3, NextByteOffset: 8, HasMore: true}},
		{name: "last line without newline", data: "a\nb", req: Request{Line: 2},
			want: Page{Text: "b", StartLine: 2, EndLine: 2, NextLine: 2, NextByteOffset: 3}},
		{name: "empty file", data: "",
			want: Page{Text: "", StartLine: 1, EndLine: 1, NextLine: 1}},
		{name: "empty lines", data: "\n\n\n", req: Request{Line: 2, Limit: 1},
			want: Page{Text: "\n", StartLine: 2, EndLine: 2, NextLine: 3, NextByteOffset: 2, HasMore: true}},
		{name: "byte offset mid-line", data: "hello\nworld\n", req: Request{ByteOffset: off(2)},
			want: Page{Text: "llo\nworld\n", StartLine: 1, EndLine: 2, NextLine: 3, NextByteOffset: 12}},
		{name: "byte offset wins over line", data: "hello\nworld\n", req: Request{Line: 1, ByteOffset: off(6)},
			want: Page{Text: "world\n", StartLine: 2, EndLine: 2, NextLine: 3, NextByteOffset: 12}},
		{name: "byte offset at end", data: "a\nb\n", req: Request{ByteOffset: off(4)},
			want: Page{Text: "", StartLine: 3, EndLine: 3, NextLine: 3, NextByteOffset: 4}},
		{name: "limit counts a continued line", data: "hello\nworld\nagain\n", req: Request{ByteOffset: off(3), Limit: 2},
			want: Page{Text: "lo\nworld\n", StartLine: 1, EndLine: 2, NextLine: 3, NextByteOffset: 12, HasMore: true}},
		{name: "budget prefers whole lines", data: "aaaa\nbbbb\ncccc\n", budget: 12,
			want: Page{Text: "aaaa\nbbbb\n", StartLine: 1, EndLine: 2, NextLine: 3, NextByteOffset: 10, HasMore: true}},
		{name: "budget exactly whole lines", data: "aaaa\nbbbb\ncccc\n", budget: 10,
			want: Page{Text: "aaaa\nbbbb\n", StartLine: 1, EndLine: 2, NextLine: 3, NextByteOffset: 10, HasMore: true}},
		{name: "long line is cut", data: "abcdefghij\nk\n", budget: 4,
			want: Page{Text: "abcd", StartLine: 1, EndLine: 1, NextLine: 1, NextByteOffset: 4, HasMore: true}},
		{name: "long line continues", data: "abcdefghij\nk\n", budget: 4, req: Request{ByteOffset: off(8)},
			want: Page{Text: "ij\n", StartLine: 1, EndLine: 1, NextLine: 2, NextByteOffset: 11, HasMore: true}},
		{name: "a line longer than the page shows a window", data: "abcdefghijklmnopqrst\nk\n", budget: 8, window: 4,
			want: Page{Text: "abcd", StartLine: 1, EndLine: 1, NextLine: 1, NextByteOffset: 4, HasMore: true}},
		{name: "the window goes on mid-line", data: "abcdefghijklmnopqrst\nk\n", budget: 8, window: 4, req: Request{ByteOffset: off(4)},
			want: Page{Text: "efgh", StartLine: 1, EndLine: 1, NextLine: 1, NextByteOffset: 8, HasMore: true}},
		{name: "the page takes the line's end once it fits", data: "abcdefghijklmnopqrst\nk\n", budget: 8, window: 4, req: Request{ByteOffset: off(14)},
			want: Page{Text: "opqrst\n", StartLine: 1, EndLine: 1, NextLine: 2, NextByteOffset: 21, HasMore: true}},
		{name: "a window under 4 bytes is 4", data: "abcdefghijklmnopqrst", budget: 8, window: 1,
			want: Page{Text: "abcd", StartLine: 1, EndLine: 1, NextLine: 1, NextByteOffset: 4, HasMore: true}},
		{name: "a line that fits the page is whole, past the window", data: "abcdefg\nhijklmn\n", budget: 8, window: 4,
			want: Page{Text: "abcdefg\n", StartLine: 1, EndLine: 1, NextLine: 2, NextByteOffset: 8, HasMore: true}},
		{name: "lines before a long one end the page before it", data: "ab\ncdefghijkl\n", budget: 8, window: 4,
			want: Page{Text: "ab\n", StartLine: 1, EndLine: 1, NextLine: 2, NextByteOffset: 3, HasMore: true}},
		{name: "the window cuts before a character", data: "ab€cdefghij", budget: 8, window: 4,
			want: Page{Text: "ab", StartLine: 1, EndLine: 1, NextLine: 1, NextByteOffset: 2, HasMore: true}},
		{name: "a window over the page is the page", data: "abcdefghij\nk\n", budget: 4, window: 9,
			want: Page{Text: "abcd", StartLine: 1, EndLine: 1, NextLine: 1, NextByteOffset: 4, HasMore: true}},
		{name: "cut before a 3-byte char", data: "ab€cd", budget: 4,
			want: Page{Text: "ab", StartLine: 1, EndLine: 1, NextLine: 1, NextByteOffset: 2, HasMore: true}},
		{name: "4-byte char fits exactly", data: "𝄞x", budget: 4,
			want: Page{Text: "𝄞", StartLine: 1, EndLine: 1, NextLine: 1, NextByteOffset: 4, HasMore: true}},
		{name: "invalid bytes show as U+FFFD", data: "a\xffb\n",
			want: Page{Text: "a\uFFFDb\n", StartLine: 1, EndLine: 1, NextLine: 2, NextByteOffset: 4}},
		{name: "invalid bytes count against the budget as shown", data: "\xff\xffab", budget: 4,
			want: Page{Text: "\uFFFD", StartLine: 1, EndLine: 1, NextLine: 1, NextByteOffset: 1, HasMore: true}},
		{name: "truncated sequence at end of file", data: "a\xe2\x82", budget: 100,
			want: Page{Text: "a\uFFFD\uFFFD", StartLine: 1, EndLine: 1, NextLine: 1, NextByteOffset: 3}},
		{name: "CRLF kept", data: "a\r\nb\r\n", req: Request{Limit: 1},
			want: Page{Text: "a\r\n", StartLine: 1, EndLine: 1, NextLine: 2, NextByteOffset: 3, HasMore: true}},

		{name: "line past the end", data: "a\nb\n", req: Request{Line: 3}, wantErr: ErrLine},
		{name: "line far past the end", data: "a\nb", req: Request{Line: 99}, wantErr: ErrLine},
		{name: "line 2 of empty file", data: "", req: Request{Line: 2}, wantErr: ErrLine},
		{name: "offset inside a character", data: "aé", req: Request{ByteOffset: off(2)}, wantErr: ErrSplit},
		{name: "offset inside a 4-byte character", data: "𝄞", req: Request{ByteOffset: off(3)}, wantErr: ErrSplit},
		{name: "negative offset", data: "abc", req: Request{ByteOffset: off(-1)}, wantErr: ErrOffset},
		{name: "offset past the end", data: "abc", req: Request{ByteOffset: off(4)}, wantErr: ErrOffset},
		{name: "negative line", data: "abc", req: Request{Line: -1}, wantErr: ErrInvalid},
		{name: "negative limit", data: "abc", req: Request{Limit: -1}, wantErr: ErrInvalid},
		{name: "binary", data: "abc\x00def", wantErr: ErrBinary},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, dir, fmt.Sprintf("f%d.txt", i), []byte(tt.data))
			p := New(Options{PageBytes: tt.budget, LineWindow: tt.window})
			req := tt.req
			req.Path = path
			got, err := p.Read(context.Background(), req)
			if tt.wantErr != nil {
				var e *Error
				if !errors.Is(err, tt.wantErr) || !errors.As(err, &e) {
					t.Fatalf("err = %v, want %v as *Error", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.want.TotalBytes = int64(len(tt.data))
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestErrorMessages checks that errors say what was wrong and what would be
// right.
func TestErrorMessages(t *testing.T) {
	dir := t.TempDir()
	text := writeFile(t, dir, "t.txt", []byte("one\ntwo\nthree\n"))
	uni := writeFile(t, dir, "u.txt", []byte("ab€"))
	bin := writeFile(t, dir, "b.bin", append(bytes.Repeat([]byte("x"), 100), 0, 1, 2))
	p := New(Options{})
	tests := []struct {
		req  Request
		want []string
	}{
		{Request{Path: text, Line: 7}, []string{"line 7", "has 3 lines", "from 1 to 3"}},
		{Request{Path: uni, ByteOffset: off(3)}, []string{"offset 3", "inside a character", "2 and 5"}},
		{Request{Path: uni, ByteOffset: off(9)}, []string{"offset 9", "has 5 bytes", "from 0 to 5"}},
		{Request{Path: bin}, []string{"binary", "103 bytes", "hex dump"}},
		{Request{Path: dir}, []string{"is a directory", "ls"}},
		{Request{Path: filepath.Join(dir, "nope")}, []string{"no such file", "nope"}},
		{Request{}, []string{"no path"}},
	}
	for _, tt := range tests {
		_, err := p.Read(context.Background(), tt.req)
		if err == nil {
			t.Errorf("%+v: no error", tt.req)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "filepager: ") {
			t.Errorf("%q lacks the package prefix", msg)
		}
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%q does not contain %q", msg, w)
			}
		}
		// The CLI prints these too: they name no MCP tool.
		if strings.Contains(msg, "run_command") || strings.Contains(msg, "_tool_output") {
			t.Errorf("%q names an MCP tool", msg)
		}
	}
}

func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	inside := writeFile(t, root, "in.txt", []byte("in\n"))
	outside := writeFile(t, dir, "out.txt", []byte("out\n"))
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(inside, filepath.Join(dir, "toinside")); err != nil {
		t.Fatal(err)
	}
	p := New(Options{Root: root})
	for _, tt := range []struct {
		path    string
		wantErr error
	}{
		{inside, nil},
		{"in.txt", nil}, // relative to the root
		{filepath.Join(dir, "toinside"), nil},
		{outside, ErrOutsideRoot},
		{"../out.txt", ErrOutsideRoot},
		{filepath.Join(root, "escape"), ErrOutsideRoot},
		{filepath.Join(root, "missing"), ErrNotFound},
		{root, ErrIsDir},
	} {
		_, err := p.Read(context.Background(), Request{Path: tt.path})
		if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
			t.Errorf("%s: err = %v, want %v", tt.path, err, tt.wantErr)
		}
	}
	if _, err := New(Options{Root: filepath.Join(dir, "nope")}).Read(context.Background(), Request{Path: inside}); !errors.Is(err, ErrInvalid) {
		t.Errorf("missing root: err = %v, want ErrInvalid", err)
	}
	if _, err := New(Options{Deny: []string{"["}}).Read(context.Background(), Request{Path: inside}); !errors.Is(err, ErrInvalid) {
		t.Errorf("malformed deny pattern: err = %v, want ErrInvalid", err)
	}
}

func TestSensitive(t *testing.T) {
	home := t.TempDir()
	key := []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n")
	cert := []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	files := map[string][]byte{
		".ssh/id_rsa":            key,
		".ssh/id_rsa.pub":        []byte("ssh-rsa AAAA user@host\n"),
		".ssh/known_hosts":       []byte("host ssh-ed25519 AAAA\n"),
		".ssh/config":            []byte("Host x\n"),
		".ssh/authorized_keys":   []byte("ssh-ed25519 AAAA\n"),
		".ssh/backup":            key,
		"proj/id_ed25519":        key,
		"proj/id_deploy":         []byte("secret\n"),
		"proj/id_rsa.bak":        []byte("secret\n"),
		"proj/id_test.go":        []byte("package x\n"),
		"proj/server.key":        []byte("secret\n"),
		"proj/cert.pem":          cert,
		"proj/key.pem":           append(append([]byte{}, cert...), "-----BEGIN RSA PRIVATE KEY-----\nMII\n-----END RSA PRIVATE KEY-----\n"...),
		"proj/privkey":           []byte("-----BEGIN PRIVATE KEY-----\r\nMII\r\n"),
		"proj/keys_test.go":      []byte("const k = `\n-----BEGIN RSA PRIVATE KEY-----\n`\n"),
		".aws/credentials":       []byte("[default]\n"),
		".aws/config":            []byte("[default]\nregion=x\n"),
		".netrc":                 []byte("machine x\n"),
		".git-credentials":       []byte("https://u:p@x\n"),
		".docker/config.json":    []byte("{}\n"),
		".gnupg/pubring.kbx":     []byte("x\n"),
		"proj/.env":              []byte("A=1\n"),
		"proj/.env.local":        []byte("A=1\n"),
		"proj/.env.example":      []byte("A=\n"),
		"proj/.envrc":            []byte("dotenv\n"),
		"proj/notes.secret":      []byte("x\n"),
		"private/plan.txt":       []byte("x\n"),
		"other/.ssh/id_ecdsa_sk": key,
	}
	refused := map[string]bool{
		".ssh/id_rsa": true, ".ssh/backup": true, "proj/id_ed25519": true, "proj/id_deploy": true,
		"proj/id_rsa.bak": true, "proj/server.key": true, "proj/key.pem": true, "proj/privkey": true,
		".aws/credentials": true, ".netrc": true, ".git-credentials": true, ".docker/config.json": true,
		".gnupg/pubring.kbx": true, "proj/.env": true, "proj/.env.local": true,
		"proj/notes.secret": true, "private/plan.txt": true, "other/.ssh/id_ecdsa_sk": true,
	}
	links := t.TempDir()
	for name, data := range files {
		writeFile(t, home, name, data)
		// The same file through an innocent-looking symlink.
		if err := os.Symlink(filepath.Join(home, name), filepath.Join(links, strings.ReplaceAll(name, "/", "_")+".txt")); err != nil {
			t.Fatal(err)
		}
	}
	p := New(Options{Home: home, Deny: []string{"*.secret", "~/private/*"}})
	for name := range files {
		for _, path := range []string{filepath.Join(home, name), filepath.Join(links, strings.ReplaceAll(name, "/", "_")+".txt")} {
			_, err := p.Read(context.Background(), Request{Path: path})
			if refused[name] {
				var e *Error
				if !errors.Is(err, ErrSensitive) || !errors.As(err, &e) || e.Hint == "" {
					t.Errorf("%s: err = %v, want ErrSensitive with a hint", path, err)
				}
			} else if err != nil {
				t.Errorf("%s: %v, want it read", path, err)
			}
		}
	}
	// "~/" in the request means Options.Home.
	if _, err := p.Read(context.Background(), Request{Path: "~/.netrc"}); !errors.Is(err, ErrSensitive) {
		t.Errorf("~/.netrc: err = %v, want ErrSensitive", err)
	}
	if _, err := p.Read(context.Background(), Request{Path: "~/.aws/config"}); err != nil {
		t.Errorf("~/.aws/config: %v", err)
	}
}

func TestSensitiveSystemPaths(t *testing.T) {
	for _, tt := range []struct {
		path    string
		refused bool
	}{
		{"/etc/shadow", true},
		{"/etc/gshadow", true},
		{"/etc/shadow-", true},
		{"/etc/passwd", false},
		{"/proc/self/environ", true},
		{"/proc/1/environ", true},
		{"/proc/1/task/1/environ", true},
		{"/proc/cpuinfo", false},
		{"/home/u/src/environ", false},
		{"/root/.ssh/id_rsa", true},
		{"/root/.ssh/id_rsa.pub", false},
		{"/srv/app/.env.production", true},
		{"/srv/app/.envrc", false},
	} {
		if got := sensitiveReason(tt.path) != ""; got != tt.refused {
			t.Errorf("sensitiveReason(%q) refuses = %v, want %v", tt.path, got, tt.refused)
		}
	}
	// The real /etc/shadow is refused before anything is opened, whether
	// or not it exists or is readable here.
	if _, err := New(Options{}).Read(context.Background(), Request{Path: "/etc/shadow"}); !errors.Is(err, ErrSensitive) {
		t.Errorf("/etc/shadow: err = %v", err)
	}
}

// numbered returns n lines "00000001\n", "00000002\n", ...: line i says i.
func numbered(n int) []byte {
	b := make([]byte, 0, 9*n)
	for i := 1; i <= n; i++ {
		b = fmt.Appendf(b, "%08d\n", i)
	}
	return b
}

// TestFarLine reads lines far past any prefix cut: the old bug cut the file
// at 256 KiB before applying the line offset.
func TestFarLine(t *testing.T) {
	const n = 1_200_000 // 10.8 MB
	path := writeFile(t, t.TempDir(), "big.txt", numbered(n))
	p := New(Options{})
	for _, line := range []int64{1, 29128, 29129, 100000, 116508, 1_000_000, n} {
		pg, err := p.Read(context.Background(), Request{Path: path, Line: line, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		want := string(numbered(int(min(line+2, n)))[9*(line-1):])
		if pg.Text != want || pg.StartLine != line || pg.NextByteOffset != 9*min(line+2, n) {
			t.Errorf("line %d: got %q (start %d, next offset %d), want %q", line, pg.Text, pg.StartLine, pg.NextByteOffset, want)
		}
	}
	_, err := p.Read(context.Background(), Request{Path: path, Line: n + 1})
	if !errors.Is(err, ErrLine) || !strings.Contains(err.Error(), "has 1200000 lines") {
		t.Errorf("line past end: %v", err)
	}
	// A byte offset far in the file gets its line number right.
	pg, err := p.Read(context.Background(), Request{Path: path, ByteOffset: off(9*777_777 + 4), Limit: 1})
	if err != nil || pg.StartLine != 777_778 || pg.Text != "7778\n" {
		t.Errorf("byte offset: %+v, %v", pg, err)
	}
}

// TestUnicodeEdges pages through text of 2-, 3- and 4-byte characters with
// every small budget and every alignment: no page may split a character or
// exceed the budget, and the pages must add up to the file.
func TestUnicodeEdges(t *testing.T) {
	dir := t.TempDir()
	for _, ch := range []string{"é", "€", "𝄞"} {
		for pad := 0; pad < 4; pad++ {
			data := []byte(strings.Repeat("x", pad) + strings.Repeat(ch, 9) + "\n" + strings.Repeat(ch, 5))
			path := writeFile(t, dir, fmt.Sprintf("u%d-%d.txt", len(ch), pad), data)
			for budget := 4; budget <= 13; budget++ {
				p := New(Options{PageBytes: budget})
				var got strings.Builder
				var at int64
				for pages := 0; ; pages++ {
					pg, err := p.Read(context.Background(), Request{Path: path, ByteOffset: off(at)})
					if err != nil {
						t.Fatalf("%q pad %d budget %d at %d: %v", ch, pad, budget, at, err)
					}
					if len(pg.Text) > budget || !utf8.ValidString(pg.Text) || strings.ContainsRune(pg.Text, utf8.RuneError) {
						t.Fatalf("%q pad %d budget %d at %d: bad page %q", ch, pad, budget, at, pg.Text)
					}
					if pg.Text != string(data[at:pg.NextByteOffset]) {
						t.Fatalf("text %q does not match offsets %d..%d", pg.Text, at, pg.NextByteOffset)
					}
					got.WriteString(pg.Text)
					at = pg.NextByteOffset
					if !pg.HasMore {
						break
					}
					if pg.Text == "" || pages > len(data) {
						t.Fatalf("no progress at %d", at)
					}
				}
				if got.String() != string(data) {
					t.Fatalf("%q pad %d budget %d: pages = %q", ch, pad, budget, got.String())
				}
			}
		}
	}
}

// TestLongLine follows byte_offset through a 20 MiB line to the end.
func TestLongLine(t *testing.T) {
	data := append(bytes.Repeat([]byte("abcdefgé"), 20<<20/9), "\nlast line\n"...)
	path := writeFile(t, t.TempDir(), "long.txt", data)
	p := New(Options{})
	var at int64
	pages := 0
	for {
		var req Request
		req.Path = path
		if pages > 0 {
			req.ByteOffset = off(at)
		}
		pg, err := p.Read(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal([]byte(pg.Text), data[at:pg.NextByteOffset]) {
			t.Fatalf("page at %d does not match the file", at)
		}
		if len(pg.Text) > DefaultPageBytes {
			t.Fatalf("page at %d has %d bytes", at, len(pg.Text))
		}
		wantStart := int64(1)
		if at >= int64(len(data))-10 {
			wantStart = 2
		}
		if pg.StartLine != wantStart {
			t.Fatalf("page at %d: startLine %d, want %d", at, pg.StartLine, wantStart)
		}
		at = pg.NextByteOffset
		pages++
		if !pg.HasMore {
			if pg.NextLine != 3 || at != int64(len(data)) {
				t.Fatalf("last page: %+v", pg)
			}
			break
		}
		if pg.NextLine != 1 && at < int64(len(data))-10 {
			t.Fatalf("nextLine left the long line early: %+v", pg)
		}
	}
	if least := len(data) / DefaultPageBytes; pages < least {
		t.Errorf("%d pages, want at least %d", pages, least)
	}
}

// A huge path comes back shortened in the error, not whole.
func TestErrorShortensHugePath(t *testing.T) {
	huge := "/tmp/" + strings.Repeat("é", 5<<20)
	_, err := New(Options{}).Read(context.Background(), Request{Path: huge})
	if err == nil {
		t.Fatal("no error for a missing 10 MiB path")
	}
	if len(err.Error()) > 1024 || !strings.Contains(err.Error(), "bytes cut)") || !utf8.ValidString(err.Error()) {
		t.Errorf("error of %d bytes (valid UTF-8: %v): %.200s", len(err.Error()), utf8.ValidString(err.Error()), err)
	}
}

// The rules of each system, checked on any system through the GOOS-like
// parameter.
func TestSensitivePerPlatform(t *testing.T) {
	for _, tt := range []struct {
		goos, path string
		want       string // a word of the reason; "" = allowed
	}{
		// Everywhere.
		{"linux", "/home/u/.ssh/id_ed25519", ".ssh"},
		{"darwin", "/Users/u/.ssh/id_ed25519", ".ssh"},
		{"windows", `C:\Users\u\.ssh\id_ed25519`, ".ssh"},
		{"windows", `C:\Users\u\.ssh\known_hosts`, ""},
		{"windows", `C:\Users\u\.aws\credentials`, ".aws"},
		{"windows", `C:\Users\u\_netrc`, ".netrc"},
		{"windows", `D:\src\app\.env`, ".env"},
		{"windows", `D:\src\app\.env.example`, ""},
		// Case is ignored everywhere: macOS and Windows ignore it by
		// default, and Linux on a case-insensitive mount (WSL's /mnt/c,
		// vfat, casefold directories) opens the same file.
		{"darwin", "/Users/u/.SSH/ID_RSA", ".ssh"},
		{"windows", `C:\Users\u\.SSH\Id_Rsa`, ".ssh"},
		{"linux", "/home/u/.SSH/notes", ".ssh"},
		{"linux", "/mnt/c/Users/u/.AWS/Credentials", ".aws"},
		{"linux", "/home/u/app/.ENV", ".env"},
		{"linux", "/home/u/.ssh/ID_RSA.PUB", ""},
		{"darwin", "/Users/u/.ssh/ID_RSA.PUB", ""},
		// macOS keychains and password hashes.
		{"darwin", "/Users/u/Library/Keychains/login.keychain-db", "keychain"},
		{"darwin", "/Library/Keychains/System.keychain", "keychain"},
		{"darwin", "/Users/u/library/keychains/x/keychain-2.db", "keychain"},
		{"darwin", "/private/etc/master.passwd", "master.passwd"},
		{"darwin", "/Users/u/Library/Preferences/com.apple.Terminal.plist", ""},
		{"linux", "/home/u/Library/Keychains/notes", ""},
		// Windows credential stores, in %APPDATA% and %LOCALAPPDATA%.
		{"windows", `C:\Users\u\AppData\Roaming\Microsoft\Credentials\DFBE70A7E5CC19A398EBF1B96859CE5D`, "credential store"},
		{"windows", `C:\Users\u\AppData\Local\Microsoft\Credentials\ABC`, "credential store"},
		{"windows", `C:\Users\u\AppData\Roaming\Microsoft\Protect\S-1-5-21\key`, "credential store"},
		{"windows", `C:\Users\u\AppData\Roaming\Microsoft\Crypto\RSA\S-1-5-21\key`, "credential store"},
		{"windows", `C:\Users\u\AppData\Local\Microsoft\Vault\4BF4C442\policy.vpol`, "credential store"},
		{"windows", `c:\users\u\appdata\roaming\microsoft\credentials\x`, "credential store"},
		{"windows", `C:\Users\u\AppData\Roaming\gnupg\private-keys-v1.d\x.key`, "GnuPG"},
		{"windows", `C:\Users\u\AppData\Roaming\gnupg\pubring.kbx`, "GnuPG"},
		{"windows", `C:\Windows\System32\config\SAM`, "registry hive"},
		{"windows", `C:\Windows\System32\config\SECURITY`, "registry hive"},
		{"windows", `C:\Windows\System32\drivers\etc\hosts`, ""},
		{"windows", `C:\Users\u\AppData\Roaming\Microsoft\Windows\Start Menu\x.lnk`, ""},
		{"windows", `C:\Users\u\AppData\Roaming\Code\User\settings.json`, ""},
		{"linux", "/home/u/AppData/Roaming/Microsoft/Credentials/x", ""},
	} {
		got := sensitiveReasonOn(tt.goos, tt.path)
		if (got == "") != (tt.want == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: sensitiveReasonOn(%q) = %q, want a reason with %q", tt.goos, tt.path, got, tt.want)
		}
	}
}

// TestLinePastEndWords: the error for a line past the end counts the
// file's lines in words that read right for one line too.
func TestLinePastEndWords(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		data string
		line int64
		want string
	}{
		{"abc", 2, "asked for line 2, the file has 1 line; ask for a line from 1 to 1"},
		{"a\nb\n", 3, "asked for line 3, the file has 2 lines; ask for a line from 1 to 2"},
	} {
		path := writeFile(t, dir, fmt.Sprintf("f%d.txt", len(tc.data)), []byte(tc.data))
		_, err := New(Options{}).Read(context.Background(), Request{Path: path, Line: tc.line})
		if !errors.Is(err, ErrLine) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.data, err, tc.want)
		}
	}
}

// TestDenyCopiedByNew: New keeps its own copy of the deny patterns: a
// caller changing its slice afterwards does not change what is refused.
func TestDenyCopiedByNew(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.secret", []byte("hidden\n"))
	deny := []string{"*.secret"}
	p := New(Options{Deny: deny})
	deny[0] = "*.nothing"
	if _, err := p.Read(context.Background(), Request{Path: filepath.Join(dir, "a.secret")}); !errors.Is(err, ErrSensitive) {
		t.Errorf("after the caller changed its slice, err = %v; want ErrSensitive from the pattern New was given", err)
	}
}
