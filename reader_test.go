package scrollback_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// testEnv is an engine over a fresh SQLite store and one session in it.
type testEnv struct {
	st   store.Store
	eng  *scrollback.Engine
	sess *scrollback.Session
}

func newTestEnv(t testing.TB) *testEnv {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "scrollback.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	eng := scrollback.New(st, scrollback.Options{})
	sess, err := eng.NewSession(context.Background(), scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	return &testEnv{st: st, eng: eng, sess: sess}
}

// save stores data as a complete copy in sess and returns its id.
func (e *testEnv) save(t testing.TB, sess *scrollback.Session, data []byte) string {
	t.Helper()
	info, err := e.st.SaveCopy(context.Background(), sess.ID(), store.CopyMeta{Tool: "test", Complete: true}, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return info.ID
}

func intp(n int) *int { return &n }

// readerText: "ab " (0-2), é (3-4), € (5-7), 😀 (8-11), two invalid bytes
// (12, 13), "z\n" (14, 15).
const readerText = "ab é€😀\xff\xfez\n"

func TestReadToolOutputPages(t *testing.T) {
	env := newTestEnv(t)
	id := env.save(t, env.sess, []byte(readerText))
	total := int64(len(readerText))
	tests := []struct {
		name   string
		offset int64
		limit  *int
		text   string
		next   int64
		more   bool
	}{
		{"whole copy", 0, nil, "ab é€😀\uFFFD\uFFFDz\n", total, false},
		{"offset == totalBytes", total, nil, "", total, false},
		{"stops before a split character", 3, intp(4), "é", 5, true},
		{"a 4-byte character exactly", 8, intp(4), "😀", 12, true},
		{"invalid byte is one character", 12, intp(1), "\uFFFD", 13, true},
		{"limit 1 on ASCII", 0, intp(1), "a", 1, true},
		{"limit 4096", 14, intp(4096), "z\n", total, false},
		{"from an invalid byte", 13, nil, "\uFFFDz\n", total, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := env.sess.ReadToolOutput(context.Background(), scrollback.ReadInput{ID: id, Offset: tt.offset, Limit: tt.limit})
			if err != nil {
				t.Fatal(err)
			}
			if p.Text != tt.text || p.NextOffset != tt.next || p.HasMore != tt.more || p.TotalBytes != total || !p.Complete {
				t.Errorf("got %+v, want text %q next %d hasMore %v totalBytes %d complete", p, tt.text, tt.next, tt.more, total)
			}
		})
	}
}

func TestReadToolOutputErrors(t *testing.T) {
	env := newTestEnv(t)
	id := env.save(t, env.sess, []byte(readerText))
	tests := []struct {
		name   string
		offset int64
		limit  *int
		is     error
		says   string
	}{
		{"negative offset", -1, nil, scrollback.ErrOffset, "offset -1 is negative"},
		{"past the end", 17, nil, scrollback.ErrOffset, "offset 17 is past the end of the copy; the copy holds 16 bytes"},
		{"far negative", -1 << 62, nil, scrollback.ErrOffset, "is negative; offsets count UTF-8 bytes from 0 to totalBytes (16)"},
		{"far past the end", 1 << 62, nil, scrollback.ErrOffset, "is past the end of the copy; the copy holds 16 bytes"},
		{"the largest offset", math.MaxInt64, intp(4096), scrollback.ErrOffset, "is past the end of the copy"},
		{"inside a 2-byte character", 4, nil, scrollback.ErrOffset, "offset 4 is inside a multi-byte UTF-8 character; the nearest valid offsets are 3 (before) and 5 (after)"},
		{"inside a 3-byte character at 6", 6, nil, scrollback.ErrOffset, "nearest valid offsets are 5 (before) and 8 (after)"},
		{"inside a 3-byte character at 7", 7, nil, scrollback.ErrOffset, "nearest valid offsets are 5 (before) and 8 (after)"},
		{"inside a 4-byte character at 9", 9, nil, scrollback.ErrOffset, "nearest valid offsets are 8 (before) and 12 (after)"},
		{"inside a 4-byte character at 11", 11, nil, scrollback.ErrOffset, "nearest valid offsets are 8 (before) and 12 (after)"},
		{"limit 0", 0, intp(0), scrollback.ErrLimit, "limit 0 is out of range; give a limit from 1 to 4096"},
		{"limit 4097", 0, intp(4097), scrollback.ErrLimit, "limit 4097 is out of range"},
		{"limit -1", 0, intp(-1), scrollback.ErrLimit, "limit -1 is out of range"},
		{"limit 1 on a 4-byte character", 8, intp(1), scrollback.ErrLimit, "limit 1 is smaller than the 4-byte character at offset 8; use a limit of at least 4"},
		{"limit 2 on a 3-byte character", 5, intp(2), scrollback.ErrLimit, "use a limit of at least 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := env.sess.ReadToolOutput(context.Background(), scrollback.ReadInput{ID: id, Offset: tt.offset, Limit: tt.limit})
			if !errors.Is(err, tt.is) {
				t.Fatalf("err = %v, want %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("error %q does not say %q", err, tt.says)
			}
			var se *scrollback.Error
			if !errors.As(err, &se) || se.Op != "read_tool_output" || se.Hint == "" {
				t.Errorf("error %#v is not a *scrollback.Error with op and hint", err)
			}
		})
	}
}

// TestReadToolOutputScoping checks that an id from anywhere but this
// session reads like one that never existed.
func TestReadToolOutputScoping(t *testing.T) {
	ctx := context.Background()
	env := newTestEnv(t)
	own := env.save(t, env.sess, []byte("mine\n"))

	other, err := env.eng.NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	otherID := env.save(t, other, []byte("other session\n"))

	forkInfo, err := env.st.ForkSession(ctx, scrollback.LocalOwner, env.sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	fork, err := env.eng.Session(ctx, scrollback.LocalOwner, forkInfo.ID)
	if err != nil {
		t.Fatal(err)
	}
	forkID := env.save(t, fork, []byte("fork\n"))

	doomed, err := env.eng.NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	doomedID := env.save(t, doomed, []byte("deleted\n"))
	if err := env.st.DeleteSession(ctx, scrollback.LocalOwner, doomed.ID()); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		sess *scrollback.Session
		id   string
	}{
		{"never existed", env.sess, store.NewID(store.CopyPrefix)},
		{"another session's", env.sess, otherID},
		{"the fork's, from the parent", env.sess, forkID},
		{"the parent's, from the fork", fork, own},
		{"from a deleted session", env.sess, doomedID},
		{"a deleted session's own", doomed, doomedID},
		{"a path", env.sess, "../../etc/passwd"},
		{"sql", env.sess, "' OR 1=1 --"},
		{"a session id", env.sess, env.sess.ID()},
	}
	var want string
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.sess.ReadToolOutput(ctx, scrollback.ReadInput{ID: c.id})
			if !errors.Is(err, scrollback.ErrNoOutput) {
				t.Fatalf("err = %v, want ErrNoOutput", err)
			}
			// The same text whatever the case, the id aside.
			text := strings.ReplaceAll(err.Error(), strconv.Quote(c.id), "ID")
			if want == "" {
				want = text
			}
			if text != want {
				t.Errorf("error %q differs from %q", text, want)
			}
		})
	}
	if p, err := env.sess.ReadToolOutput(ctx, scrollback.ReadInput{ID: own}); err != nil || p.Text != "mine\n" {
		t.Errorf("own copy: %+v, %v", p, err)
	}
	if _, err := env.sess.ReadToolOutput(ctx, scrollback.ReadInput{}); !errors.Is(err, scrollback.ErrArgument) {
		t.Errorf("empty id: err = %v, want ErrArgument", err)
	}
}

// boundaries returns the character boundaries of data, decoding from 0: a
// valid sequence is one character, any other byte one of its own.
func boundaries(data []byte) map[int]bool {
	b := map[int]bool{0: true}
	for i := 0; i < len(data); {
		_, size := utf8.DecodeRune(data[i:])
		i += size
		b[i] = true
	}
	return b
}

// FuzzReadPages checks, for random copies and limits, that following
// nextOffset from 0:
//   - yields pages whose raw bytes (data[offset:nextOffset]) concatenate to
//     the copy, which Cat returns byte for byte;
//   - never ends a page inside a character, and ends it as late as the limit
//     allows (the next character would not fit);
//   - gives text that is valid UTF-8: the raw bytes with U+FFFD for each
//     invalid byte;
//   - refuses a limit smaller than the character at the offset with
//     ErrLimit, and only then;
//   - ends with hasMore=false exactly at totalBytes.
func FuzzReadPages(f *testing.F) {
	env := newTestEnv(f)
	f.Add([]byte(readerText), uint16(3))
	f.Add([]byte("plain ascii\n"), uint16(4096))
	f.Add([]byte("😀😀\xf0\x9f\x98"), uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, lim uint16) {
		ctx := context.Background()
		id := env.save(t, env.sess, data)
		var cat bytes.Buffer
		if _, err := env.sess.Cat(ctx, id, &cat); err != nil || !bytes.Equal(cat.Bytes(), data) {
			t.Fatalf("Cat: %v, equal %v", err, bytes.Equal(cat.Bytes(), data))
		}
		bound := boundaries(data)
		limit := 1 + int(lim)%scrollback.PageLimit
		var got []byte
		for off := int64(0); ; {
			l := limit
			p, err := env.sess.ReadToolOutput(ctx, scrollback.ReadInput{ID: id, Offset: off, Limit: &l})
			if errors.Is(err, scrollback.ErrLimit) {
				_, size := utf8.DecodeRune(data[off:])
				if size <= limit {
					t.Fatalf("ErrLimit at %d with limit %d, character of %d bytes: %v", off, limit, size, err)
				}
				l = utf8.UTFMax
				p, err = env.sess.ReadToolOutput(ctx, scrollback.ReadInput{ID: id, Offset: off, Limit: &l})
			}
			if err != nil {
				t.Fatalf("offset %d limit %d: %v", off, l, err)
			}
			if p.TotalBytes != int64(len(data)) {
				t.Fatalf("totalBytes %d, want %d", p.TotalBytes, len(data))
			}
			if p.NextOffset == off {
				if off != int64(len(data)) || p.HasMore || p.Text != "" {
					t.Fatalf("stuck at %d: %+v", off, p)
				}
				break
			}
			if p.NextOffset < off || p.NextOffset-off > int64(l) || !bound[int(p.NextOffset)] {
				t.Fatalf("page [%d, %d) with limit %d ends badly", off, p.NextOffset, l)
			}
			if p.NextOffset < int64(len(data)) {
				if _, size := utf8.DecodeRune(data[p.NextOffset:]); p.NextOffset+int64(size)-off <= int64(l) {
					t.Fatalf("page [%d, %d) stops early: next character fits limit %d", off, p.NextOffset, l)
				}
			}
			raw := data[off:p.NextOffset]
			if !utf8.ValidString(p.Text) || p.Text != eachInvalid(raw) {
				t.Fatalf("page text %q is not %q with U+FFFD per invalid byte", p.Text, raw)
			}
			if p.HasMore != (p.NextOffset < int64(len(data))) {
				t.Fatalf("hasMore %v at nextOffset %d of %d", p.HasMore, p.NextOffset, len(data))
			}
			got = append(got, raw...)
			off = p.NextOffset
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("pages concatenate to %q, want %q", got, data)
		}
	})
}

// eachInvalid is raw with each byte that is not part of a valid sequence
// replaced by U+FFFD.
func eachInvalid(raw []byte) string {
	var sb strings.Builder
	for len(raw) > 0 {
		r, size := utf8.DecodeRune(raw)
		sb.WriteRune(r)
		raw = raw[size:]
	}
	return sb.String()
}

// brokenStore answers page reads as a store breaking its contract would:
// a short read without an error, or no copy and no error.
type brokenStore struct {
	store.Store
	short bool
}

func (b brokenStore) StatReadCopyAt(ctx context.Context, session, id string, p []byte, off int64) (store.CopyInfo, int, error) {
	info, n, err := b.Store.StatReadCopyAt(ctx, session, id, p, off)
	if !b.short {
		return store.CopyInfo{}, 0, nil
	}
	if err == io.EOF {
		err = nil
	}
	return info, max(n-1, 0), err
}

// TestReadToolOutputBrokenStore: a store that returns fewer bytes than the
// copy holds, or nothing at all, gives an error, never a wrong page.
func TestReadToolOutputBrokenStore(t *testing.T) {
	env := newTestEnv(t)
	id := env.save(t, env.sess, []byte(readerText))
	for _, short := range []bool{true, false} {
		t.Run(fmt.Sprintf("short=%v", short), func(t *testing.T) {
			sess, err := scrollback.New(brokenStore{env.st, short}, scrollback.Options{}).Session(context.Background(), scrollback.LocalOwner, env.sess.ID())
			if err != nil {
				t.Fatal(err)
			}
			for _, off := range []int64{0, 3, 15} {
				page, err := sess.ReadToolOutput(context.Background(), scrollback.ReadInput{ID: id, Offset: off})
				switch {
				case err == nil:
					t.Errorf("offset %d: page %+v, want an error", off, page)
				case !short && !errors.Is(err, scrollback.ErrNoOutput):
					t.Errorf("offset %d: %v, want ErrNoOutput", off, err)
				case short && !strings.Contains(err.Error(), "want"):
					t.Errorf("offset %d: %v does not say what was wanted", off, err)
				}
			}
		})
	}
}

// TestCatRange: a range of a copy is its bytes from one offset to another,
// both on character boundaries; an offset inside a character is refused
// with the nearest valid offsets, as read_tool_output refuses it.
func TestCatRange(t *testing.T) {
	env := newTestEnv(t)
	id := env.save(t, env.sess, []byte(readerText))
	ctx := context.Background()
	tests := []struct {
		name     string
		from, to int64
		want     string
		err      error
		msg      string
	}{
		{"whole copy", 0, -1, readerText, nil, ""},
		{"to the end", 5, -1, readerText[5:], nil, ""},
		{"one character", 8, 12, "😀", nil, ""},
		{"empty at the end", int64(len(readerText)), -1, "", nil, ""},
		{"empty in the middle", 3, 3, "", nil, ""},
		{"invalid bytes are characters", 12, 14, "\xff\xfe", nil, ""},
		{"start inside é", 4, 8, "", scrollback.ErrOffset, "nearest valid offsets are 3 (before) and 5 (after)"},
		{"end inside 😀", 0, 10, "", scrollback.ErrOffset, "nearest valid offsets are 8 (before) and 12 (after)"},
		{"past the end", 0, 99, "", scrollback.ErrOffset, "past the end"},
		{"negative", -1, 4, "", scrollback.ErrOffset, "negative"},
		{"backwards", 8, 5, "", scrollback.ErrOffset, "ends before it starts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			info, err := env.sess.CatRange(ctx, "test", id, tt.from, tt.to, &b)
			if tt.err != nil {
				if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.msg) || b.Len() != 0 {
					t.Fatalf("got %v (%d bytes written), want %v saying %q", err, b.Len(), tt.err, tt.msg)
				}
				if info.TotalBytes != int64(len(readerText)) {
					t.Errorf("an offset error lost the copy's size: %+v", info)
				}
				return
			}
			if err != nil || b.String() != tt.want {
				t.Fatalf("got %q, %v; want %q", b.String(), err, tt.want)
			}
		})
	}
	other, err := env.eng.NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.CatRange(ctx, "test", id, 0, -1, io.Discard); !errors.Is(err, scrollback.ErrNoOutput) {
		t.Errorf("another session read the copy: %v", err)
	}
}

// FuzzCatRange checks, for random copies and ranges, that CatRange
// returns exactly data[from:to] when both ends are character boundaries
// (decoding from 0) and from <= to, and refuses every other range with
// ErrOffset without writing anything.
func FuzzCatRange(f *testing.F) {
	env := newTestEnv(f)
	f.Add([]byte(readerText), uint16(4), uint16(8))
	f.Add([]byte("😀😀\xf0\x9f\x98"), uint16(4), uint16(11))
	f.Add(bytes.Repeat([]byte("é"), 40000), uint16(1), uint16(65535))
	f.Fuzz(func(t *testing.T, data []byte, a, b uint16) {
		ctx := context.Background()
		id := env.save(t, env.sess, data)
		from, to := int64(a)%(int64(len(data))+2), int64(b)%(int64(len(data))+2)
		var got bytes.Buffer
		_, err := env.sess.CatRange(ctx, "test", id, from, to, &got)
		bound := boundaries(data)
		ok := from <= to && to <= int64(len(data)) && bound[int(from)] && bound[int(to)]
		if ok {
			if err != nil || !bytes.Equal(got.Bytes(), data[from:to]) {
				t.Fatalf("range %d-%d of %d bytes: %v, equal %v", from, to, len(data), err, bytes.Equal(got.Bytes(), data[from:to]))
			}
			return
		}
		if !errors.Is(err, scrollback.ErrOffset) || got.Len() != 0 {
			t.Fatalf("range %d-%d of %d bytes (boundaries %v %v): got %v and %d bytes, want ErrOffset and none",
				from, to, len(data), bound[int(from)], bound[int(to)], err, got.Len())
		}
	})
}

// An output_id given as its resource URI (scrollback://output/ID, as a
// resource_link names it) gets the not_found error of any id not in the
// session, with a hint that names the bare id, for every call that reads
// a copy: before, the hint sent the caller looking for another id.
func TestReadResourceURI(t *testing.T) {
	sess := newSession(t, scrollback.Options{})
	ctx := context.Background()
	sh := sess.History(ctx, "t", "", []byte(strings.Repeat("row\n", 20000)))
	if sh.OutputID == "" {
		t.Fatal("no copy retained")
	}
	for _, uri := range []string{"scrollback://output/" + sh.OutputID, "scrollback://output/" + sh.OutputID + "#bytes=0-10"} {
		for name, call := range map[string]func(id string) error{
			"ReadToolOutput": func(id string) error { _, err := sess.ReadToolOutput(ctx, scrollback.ReadInput{ID: id}); return err },
			"GrepToolOutput": func(id string) error {
				_, err := sess.GrepToolOutput(ctx, scrollback.GrepInput{ID: id, Pattern: "row"})
				return err
			},
			"QueryToolOutput": func(id string) error {
				_, err := sess.QueryToolOutput(ctx, scrollback.QueryInput{ID: id, Filter: "."})
				return err
			},
			"Cat": func(id string) error { _, err := sess.Cat(ctx, id, io.Discard); return err },
		} {
			err := call(uri)
			if !errors.Is(err, scrollback.ErrNoOutput) || !strings.Contains(err.Error(), `bare id, "`+sh.OutputID+`"`) {
				t.Errorf("%s(%q) = %v; want the not_found error naming the bare id %q", name, uri, err, sh.OutputID)
			}
		}
	}
}
