package mcpserver

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/filepager"
	"github.com/scrollback-dev/scrollback/present"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// evictingStore is a real SQLite store whose copies all read as evicted
// under a quota: the error a backend with eviction returns.
type evictingStore struct{ store.Store }

func (evictingStore) StatCopy(ctx context.Context, session, id string) (store.CopyInfo, error) {
	return store.CopyInfo{}, fmt.Errorf("copy %s was evicted on 2026-01-02 under the storage quota; re-run its source to see it: %w", id, store.ErrEvicted)
}

func (evictingStore) StatReadCopyAt(ctx context.Context, session, id string, p []byte, off int64) (store.CopyInfo, int, error) {
	return store.CopyInfo{}, 0, fmt.Errorf("copy %s was evicted on 2026-01-02 under the storage quota; re-run its source to see it: %w", id, store.ErrEvicted)
}

// TestErrorKindsOfStore: a copy evicted under a quota and a store that
// cannot be reached give tool errors of kinds "evicted" and "unavailable",
// with the session in _meta.
func TestErrorKindsOfStore(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "scrollback.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })

	sess, err := scrollback.New(evictingStore{st}, scrollback.Options{}).NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, NewServer(sess, Options{}))
	res := call(t, cs, "read_tool_output", map[string]any{"id": "out_aaaaaaaaaaaaaaaaaaaaaaaaaa"})
	if !res.IsError || res.Meta[MetaErrorKind] != scrollback.KindEvicted || res.Meta[MetaSession] != sess.ID() {
		t.Errorf("evicted copy: isError %v, _meta %v, text %q", res.IsError, res.Meta, text(res, 0))
	}
	if !strings.Contains(text(res, 0), "re-run") {
		t.Errorf("evicted copy: message %q does not say to re-run the source", text(res, 0))
	}

	sess2, err := scrollback.New(st, scrollback.Options{}).NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	cs2 := connect(t, NewServer(sess2, Options{}))
	st.Close() // the store goes away under a running server
	res = call(t, cs2, "read_tool_output", map[string]any{"id": "out_aaaaaaaaaaaaaaaaaaaaaaaaaa"})
	if !res.IsError || res.Meta[MetaErrorKind] != scrollback.KindUnavailable {
		t.Errorf("closed store: isError %v, _meta %v, text %q", res.IsError, res.Meta, text(res, 0))
	}
}

// TestFinishCutsLongMessages: a failure whose message is longer than 2 KiB
// is cut on a character boundary, whatever the width of the character
// there, and says how long it was.
func TestFinishCutsLongMessages(t *testing.T) {
	for _, width := range []int{1, 2, 3, 4} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			ch := []string{"a", "é", "✓", "😀"}[width-1]
			msg := "x" + strings.Repeat(ch, 3000)
			srv := mcp.NewServer(&mcp.Implementation{Name: "t"}, nil)
			srv.AddTool(&mcp.Tool{Name: "fail", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var r mcp.CallToolResult
				r.SetError(fmt.Errorf("%s: %w", msg, scrollback.ErrArgument))
				return &r, nil
			})
			eng, _ := newEngine(t, filepager.Options{})
			srv.AddReceivingMiddleware(FinishResults(NewBinding(eng, scrollback.LocalOwner), func() []string { return []string{"fail"} }, nil))
			res := call(t, connect(t, srv), "fail", map[string]any{})
			got := text(res, 0)
			if !res.IsError || !utf8.ValidString(got) || len(got) > maxMessage || !strings.Contains(got, "bytes cut)") {
				t.Fatalf("isError %v, %d bytes, valid %v: %.100q…", res.IsError, len(got), utf8.ValidString(got), got)
			}
			if res.Meta[MetaErrorKind] != scrollback.KindArgument || !strings.HasPrefix(got, "fail: x") {
				t.Errorf("_meta %v, text %.40q", res.Meta, got)
			}
		})
	}
}

// FuzzCutMessage: a cut message is a prefix of the original ending on a
// character boundary (valid text stays valid), followed by the note, and is
// bounded whatever the original's length; a short message is untouched.
func FuzzCutMessage(f *testing.F) {
	f.Add("short", uint(0))
	f.Add(strings.Repeat("é", 1500), uint(1))
	f.Add(strings.Repeat("😀", 600), uint(3))
	f.Fuzz(func(t *testing.T, s string, pad uint) {
		msg := strings.Repeat("x", int(pad%(maxMessage+8))) + s
		r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
		cutMessage(r)
		got := r.Content[0].(*mcp.TextContent).Text
		if len(msg) <= maxMessage {
			if got != msg {
				t.Fatalf("a %d-byte message was changed", len(msg))
			}
			return
		}
		head, _, ok := strings.Cut(got, "…(")
		if !ok || !strings.HasPrefix(msg, head) || len(got) > maxMessage {
			t.Fatalf("cut of a %d-byte message: %d bytes, head %d bytes", len(msg), len(got), len(head))
		}
		if utf8.ValidString(msg) && !utf8.ValidString(got) {
			t.Fatalf("the cut split a character")
		}
		// An invalid byte is a character of its own (package utf8x's rule),
		// so only a valid message's cut is checked against utf8.RuneStart.
		if utf8.ValidString(msg) && !utf8.RuneStart(msg[len(head)]) {
			t.Fatalf("the cut at %d is inside a character", len(head))
		}
	})
}

// A command's output shown whole but incomplete (a process outside its
// group held the output open when reading stopped) says so after the
// output: the model must not take it for the whole output.
func TestRunCommandTextIncomplete(t *testing.T) {
	zero := 0
	whole := scrollback.RunCommandResult{ExitCode: &zero}
	whole.Preview, whole.Complete = "early\n", true
	if got := runCommandText(scrollback.RunCommandInput{}, whole); len(got) != 1 {
		t.Errorf("a complete output: %q", got)
	}
	cut := whole
	cut.Complete = false
	got := runCommandText(scrollback.RunCommandInput{}, cut)
	if len(got) != 2 || got[1] != "[scrollback: "+present.OutputHeldOpen+"]" {
		t.Errorf("an incomplete output: %q", got)
	}
}
