// Package storetest is the conformance suite for store.Store backends, in the
// manner of testing/slogtest: a backend's own test calls Run with a function
// that opens a fresh, empty store, and Run checks every promise the Store
// contract makes — sessions and their owners, copies saved from streams and
// read back at every interesting offset, isolation between sessions, saves
// that fail or are cancelled midway, and concurrent use.
//
// The suite uses nothing but the store.Store interface, so the SQLite and
// PostgreSQL backends run it unchanged:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			db, err := sqlite.Open(filepath.Join(t.TempDir(), "test.db"), nil)
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { db.Close() })
//			return db
//		})
//	}
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/scrollback-dev/scrollback/store"
)

// Run runs the conformance suite as subtests of t. newStore is called once
// per subtest and must return an empty store that the subtest may use
// exclusively; it should arrange for the store to be closed (t.Cleanup).
// Run never closes a store itself.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"CreateSession", testCreateSession},
		{"GetSession", testGetSession},
		{"ListSessions", testListSessions},
		{"ListSessionsCounts", testListSessionsCounts},
		{"ForkSession", testForkSession},
		{"DeleteSession", testDeleteSession},
		{"OwnerScoping", testOwnerScoping},
		{"BadSessionIDs", testBadSessionIDs},
		{"DefaultSession", testDefaultSession},
		{"DefaultSessionConcurrent", testDefaultSessionConcurrent},
		{"SaveSizes", testSaveSizes},
		{"SaveShortReads", testSaveShortReads},
		{"ReadCopyAt", testReadCopyAt},
		{"StatReadCopyAt", testStatReadCopyAt},
		{"ReaderAt", testReaderAt},
		{"Lines", testLines},
		{"Meta", testMeta},
		{"IDsUnique", testIDsUnique},
		{"ListCopies", testListCopies},
		{"CopyIsolation", testCopyIsolation},
		{"CopySession", testCopySession},
		{"ForkIsolation", testForkIsolation},
		{"DeletedSessionCopies", testDeletedSessionCopies},
		{"BadCopyIDs", testBadCopyIDs},
		{"SaveReaderFails", testSaveReaderFails},
		{"SaveCancelled", testSaveCancelled},
		{"SaveMissingSession", testSaveMissingSession},
		{"Concurrent", testConcurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, newStore(t))
		})
	}
	runHousekeeping(t, newStore)
	runPending(t, newStore)
}

// Owners used throughout the suite.
const (
	alice = "alice"
	bob   = "bob"
)

// badIDs look like paths or SQL; no backend may treat them as anything but
// an id that does not exist.
var badIDs = []string{
	"",
	"../../etc/passwd",
	"/etc/passwd",
	"' OR 1=1 --",
	"\" OR \"\"=\"",
	"%",
	"*",
	"out_%",
	"s_%",
	"x\x00y",
	strings.Repeat("a", 10000),
}

func ctxT(t *testing.T) context.Context { return t.Context() }

func createSession(t *testing.T, s store.Store, owner string) store.Session {
	t.Helper()
	sess, err := s.CreateSession(ctxT(t), owner)
	if err != nil {
		t.Fatalf("CreateSession(%q): %v", owner, err)
	}
	return sess
}

func saveCopy(t *testing.T, s store.Store, session string, meta store.CopyMeta, data []byte) store.CopyInfo {
	t.Helper()
	info, err := s.SaveCopy(ctxT(t), session, meta, bytes.NewReader(data))
	if err != nil {
		t.Fatalf("SaveCopy(%d bytes): %v", len(data), err)
	}
	return info
}

// content returns n deterministic bytes of text: lines of varying length
// holding ASCII and multi-byte UTF-8, so newlines and characters land on and
// around chunk boundaries.
func content(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	words := []string{"alpha", "β", "γάμμα", "日本語", "🙂", "x", "0123456789", "\t", " "}
	b := make([]byte, 0, n+16)
	for len(b) < n {
		switch r.IntN(12) {
		case 0:
			b = append(b, '\n')
		case 1:
			b = append(b, byte(r.IntN(256))) // not necessarily valid UTF-8
		default:
			b = append(b, words[r.IntN(len(words))]...)
		}
	}
	return b[:n]
}

// countLines is the reference for CopyInfo.Lines: newline-terminated lines
// plus one for a final unterminated line.
func countLines(b []byte) int64 {
	n := int64(bytes.Count(b, []byte{'\n'}))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// readAll reads a whole copy back in pieces of size step.
func readAll(t *testing.T, s store.Store, session, id string, total int64, step int) []byte {
	t.Helper()
	out := make([]byte, 0, total)
	p := make([]byte, step)
	for off := int64(0); ; {
		n, err := s.ReadCopyAt(ctxT(t), session, id, p, off)
		out = append(out, p[:n]...)
		off += int64(n)
		if err == io.EOF {
			if off != total {
				t.Fatalf("ReadCopyAt: io.EOF at offset %d, copy has %d bytes", off, total)
			}
			return out
		}
		if err != nil {
			t.Fatalf("ReadCopyAt(off=%d, len=%d): %v", off-int64(n), step, err)
		}
		if n != len(p) {
			t.Fatalf("ReadCopyAt(off=%d, len=%d) = %d, nil: short read without error", off-int64(n), step, n)
		}
	}
}

func checkSession(t *testing.T, got store.Session, owner, parent string) {
	t.Helper()
	if !store.ValidID(store.SessionPrefix, got.ID) {
		t.Errorf("session id %q is not a valid %q id", got.ID, store.SessionPrefix)
	}
	if got.Owner != owner {
		t.Errorf("session %s: Owner = %q, want %q", got.ID, got.Owner, owner)
	}
	if got.Parent != parent {
		t.Errorf("session %s: Parent = %q, want %q", got.ID, got.Parent, parent)
	}
	if d := time.Since(got.CreatedAt); got.CreatedAt.IsZero() || d < -time.Minute || d > time.Hour {
		t.Errorf("session %s: CreatedAt = %v, want about now", got.ID, got.CreatedAt)
	}
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: err = %v, want %v", what, err, want)
	}
}

func testCreateSession(t *testing.T, s store.Store) {
	a := createSession(t, s, alice)
	checkSession(t, a, alice, "")
	if a.Copies != 0 || a.Bytes != 0 {
		t.Errorf("new session: Copies, Bytes = %d, %d, want 0, 0", a.Copies, a.Bytes)
	}
	b := createSession(t, s, alice)
	if a.ID == b.ID {
		t.Errorf("two CreateSession calls returned the same id %q", a.ID)
	}
	// The empty owner is an owner like any other.
	e := createSession(t, s, "")
	checkSession(t, e, "", "")
}

func testGetSession(t *testing.T, s store.Store) {
	a := createSession(t, s, alice)
	got, err := s.GetSession(ctxT(t), alice, a.ID)
	if err != nil {
		t.Fatalf("GetSession: %v", err)
	}
	if got.ID != a.ID || got.Owner != a.Owner || got.Parent != a.Parent {
		t.Errorf("GetSession = %+v, want %+v", got, a)
	}
	if !got.CreatedAt.Equal(a.CreatedAt) && absDur(got.CreatedAt.Sub(a.CreatedAt)) > time.Millisecond {
		t.Errorf("GetSession CreatedAt = %v, CreateSession said %v", got.CreatedAt, a.CreatedAt)
	}
	_, err = s.GetSession(ctxT(t), alice, store.NewID(store.SessionPrefix))
	wantErr(t, "GetSession(unknown id)", err, store.ErrSessionNotFound)
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func testListSessions(t *testing.T, s store.Store) {
	if got, err := s.ListSessions(ctxT(t), alice); err != nil || len(got) != 0 {
		t.Fatalf("ListSessions on an empty store = %v, %v; want none, nil", got, err)
	}
	var want []string
	for range 4 {
		want = append(want, createSession(t, s, alice).ID)
	}
	createSession(t, s, bob)
	got, err := s.ListSessions(ctxT(t), alice)
	if err != nil {
		t.Fatalf("ListSessions: %v", err)
	}
	var ids []string
	for _, sess := range got {
		checkSession(t, sess, alice, "")
		ids = append(ids, sess.ID)
	}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("ListSessions ids = %v, want %v (oldest first, alice's only)", ids, want)
	}
	for i := 1; i < len(got); i++ {
		if got[i].CreatedAt.Before(got[i-1].CreatedAt) {
			t.Errorf("ListSessions not oldest first: %v before %v", got[i-1].CreatedAt, got[i].CreatedAt)
		}
	}
}

func testListSessionsCounts(t *testing.T, s store.Store) {
	full := createSession(t, s, alice)
	empty := createSession(t, s, alice)
	sizes := []int{0, 10, store.ChunkSize + 3}
	var total int64
	for i, n := range sizes {
		saveCopy(t, s, full.ID, store.CopyMeta{Tool: "t"}, content(uint64(i), n))
		total += int64(n)
	}
	got, err := s.ListSessions(ctxT(t), alice)
	if err != nil {
		t.Fatalf("ListSessions: %v", err)
	}
	counts := map[string][2]int64{}
	for _, sess := range got {
		counts[sess.ID] = [2]int64{int64(sess.Copies), sess.Bytes}
	}
	if c := counts[full.ID]; c != [2]int64{int64(len(sizes)), total} {
		t.Errorf("session with copies: Copies, Bytes = %d, %d; want %d, %d", c[0], c[1], len(sizes), total)
	}
	if c, ok := counts[empty.ID]; !ok || c != [2]int64{0, 0} {
		t.Errorf("empty session: listed %v, Copies, Bytes = %d, %d; want listed, 0, 0", ok, c[0], c[1])
	}
}

func testForkSession(t *testing.T, s store.Store) {
	parent := createSession(t, s, alice)
	fork, err := s.ForkSession(ctxT(t), alice, parent.ID)
	if err != nil {
		t.Fatalf("ForkSession: %v", err)
	}
	checkSession(t, fork, alice, parent.ID)
	if fork.ID == parent.ID {
		t.Fatalf("fork has its parent's id %q", fork.ID)
	}
	got, err := s.GetSession(ctxT(t), alice, fork.ID)
	if err != nil {
		t.Fatalf("GetSession(fork): %v", err)
	}
	if got.Parent != parent.ID {
		t.Errorf("GetSession(fork).Parent = %q, want %q", got.Parent, parent.ID)
	}
	// A fork of a fork, and a fork that outlives its parent.
	grand, err := s.ForkSession(ctxT(t), alice, fork.ID)
	if err != nil {
		t.Fatalf("ForkSession(fork): %v", err)
	}
	checkSession(t, grand, alice, fork.ID)
	if err := s.DeleteSession(ctxT(t), alice, fork.ID); err != nil {
		t.Fatalf("DeleteSession(fork): %v", err)
	}
	if _, err := s.GetSession(ctxT(t), alice, grand.ID); err != nil {
		t.Errorf("GetSession after its parent was deleted: %v", err)
	}

	_, err = s.ForkSession(ctxT(t), bob, parent.ID)
	wantErr(t, "ForkSession(another owner's session)", err, store.ErrSessionNotFound)
	_, err = s.ForkSession(ctxT(t), alice, store.NewID(store.SessionPrefix))
	wantErr(t, "ForkSession(unknown id)", err, store.ErrSessionNotFound)
	_, err = s.ForkSession(ctxT(t), alice, fork.ID)
	wantErr(t, "ForkSession(deleted session)", err, store.ErrSessionNotFound)
}

func testDeleteSession(t *testing.T, s store.Store) {
	a := createSession(t, s, alice)
	keep := createSession(t, s, alice)
	if err := s.DeleteSession(ctxT(t), bob, a.ID); !errors.Is(err, store.ErrSessionNotFound) {
		t.Errorf("DeleteSession by another owner: err = %v, want ErrSessionNotFound", err)
	}
	if _, err := s.GetSession(ctxT(t), alice, a.ID); err != nil {
		t.Fatalf("session gone after another owner's failed DeleteSession: %v", err)
	}
	if err := s.DeleteSession(ctxT(t), alice, a.ID); err != nil {
		t.Fatalf("DeleteSession: %v", err)
	}
	_, err := s.GetSession(ctxT(t), alice, a.ID)
	wantErr(t, "GetSession(deleted)", err, store.ErrSessionNotFound)
	err = s.DeleteSession(ctxT(t), alice, a.ID)
	wantErr(t, "DeleteSession twice", err, store.ErrSessionNotFound)
	list, err := s.ListSessions(ctxT(t), alice)
	if err != nil {
		t.Fatalf("ListSessions: %v", err)
	}
	if len(list) != 1 || list[0].ID != keep.ID {
		t.Errorf("ListSessions after delete = %v, want only %s", list, keep.ID)
	}
}

// errorShape makes two not-found errors comparable: it removes the id the
// message may mention, so that only the wording remains.
func errorShape(err error, id string) string {
	if err == nil {
		return "<nil>"
	}
	return strings.ReplaceAll(err.Error(), id, "ID")
}

func testOwnerScoping(t *testing.T, s store.Store) {
	a := createSession(t, s, alice)
	missing := store.NewID(store.SessionPrefix)
	_, errOther := s.GetSession(ctxT(t), bob, a.ID)
	_, errMissing := s.GetSession(ctxT(t), bob, missing)
	wantErr(t, "GetSession(another owner's session)", errOther, store.ErrSessionNotFound)
	if errorShape(errOther, a.ID) != errorShape(errMissing, missing) {
		t.Errorf("another owner's session and a missing one read differently:\n  %v\n  %v", errOther, errMissing)
	}
	_, errOther = s.ForkSession(ctxT(t), bob, a.ID)
	_, errMissing = s.ForkSession(ctxT(t), bob, missing)
	if errorShape(errOther, a.ID) != errorShape(errMissing, missing) {
		t.Errorf("ForkSession: another owner's session and a missing one read differently:\n  %v\n  %v", errOther, errMissing)
	}
	errOther = s.DeleteSession(ctxT(t), bob, a.ID)
	errMissing = s.DeleteSession(ctxT(t), bob, missing)
	if errorShape(errOther, a.ID) != errorShape(errMissing, missing) {
		t.Errorf("DeleteSession: another owner's session and a missing one read differently:\n  %v\n  %v", errOther, errMissing)
	}
	if list, err := s.ListSessions(ctxT(t), bob); err != nil || len(list) != 0 {
		t.Errorf("ListSessions(bob) = %v, %v; want none of alice's sessions", list, err)
	}
	// Owners are compared exactly.
	for _, o := range []string{"Alice", "alice ", "alic", "%", "' OR 1=1 --"} {
		if _, err := s.GetSession(ctxT(t), o, a.ID); !errors.Is(err, store.ErrSessionNotFound) {
			t.Errorf("GetSession(owner %q) of alice's session: err = %v, want ErrSessionNotFound", o, err)
		}
	}
}

func testBadSessionIDs(t *testing.T, s store.Store) {
	createSession(t, s, alice)
	for _, id := range badIDs {
		_, err := s.GetSession(ctxT(t), alice, id)
		wantErr(t, fmt.Sprintf("GetSession(%.20q)", id), err, store.ErrSessionNotFound)
		_, err = s.ForkSession(ctxT(t), alice, id)
		wantErr(t, fmt.Sprintf("ForkSession(%.20q)", id), err, store.ErrSessionNotFound)
		err = s.DeleteSession(ctxT(t), alice, id)
		wantErr(t, fmt.Sprintf("DeleteSession(%.20q)", id), err, store.ErrSessionNotFound)
		_, err = s.SaveCopy(ctxT(t), id, store.CopyMeta{}, strings.NewReader("x"))
		wantErr(t, fmt.Sprintf("SaveCopy(session %.20q)", id), err, store.ErrSessionNotFound)
	}
	if list, err := s.ListSessions(ctxT(t), alice); err != nil || len(list) != 1 {
		t.Errorf("ListSessions after bad ids = %d sessions, %v; want 1", len(list), err)
	}
}

func testDefaultSession(t *testing.T, s store.Store) {
	d1, err := s.DefaultSession(ctxT(t), alice)
	if err != nil {
		t.Fatalf("DefaultSession: %v", err)
	}
	checkSession(t, d1, alice, "")
	d2, err := s.DefaultSession(ctxT(t), alice)
	if err != nil {
		t.Fatalf("DefaultSession again: %v", err)
	}
	if d1.ID != d2.ID {
		t.Errorf("DefaultSession not stable: %s then %s", d1.ID, d2.ID)
	}
	if got, err := s.GetSession(ctxT(t), alice, d1.ID); err != nil || got.ID != d1.ID {
		t.Errorf("GetSession(default) = %v, %v", got.ID, err)
	}
	db, err := s.DefaultSession(ctxT(t), bob)
	if err != nil {
		t.Fatalf("DefaultSession(bob): %v", err)
	}
	if db.ID == d1.ID || db.Owner != bob {
		t.Errorf("bob's default session = %+v; want bob's own, not alice's %s", db, d1.ID)
	}
	if c := createSession(t, s, alice); c.ID == d1.ID {
		t.Errorf("CreateSession returned the default session's id")
	}
	d3, err := s.DefaultSession(ctxT(t), alice)
	if err != nil || d3.ID != d1.ID {
		t.Errorf("DefaultSession after CreateSession = %s, %v; want %s", d3.ID, err, d1.ID)
	}
	// Once deleted, the default is replaced by a new session.
	if err := s.DeleteSession(ctxT(t), alice, d1.ID); err != nil {
		t.Fatalf("DeleteSession(default): %v", err)
	}
	d4, err := s.DefaultSession(ctxT(t), alice)
	if err != nil {
		t.Fatalf("DefaultSession after deleting it: %v", err)
	}
	if d4.ID == d1.ID {
		t.Errorf("DefaultSession after deleting it returned the deleted id %s", d1.ID)
	}
}

func testDefaultSessionConcurrent(t *testing.T, s store.Store) {
	const n = 16
	for _, owner := range []string{alice, bob} {
		ids := make([]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				sess, err := s.DefaultSession(ctxT(t), owner)
				ids[i], errs[i] = sess.ID, err
			})
		}
		close(start)
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("concurrent DefaultSession(%q): %v", owner, errs[i])
			}
			if ids[i] != ids[0] {
				t.Fatalf("concurrent DefaultSession(%q) disagree: %s and %s", owner, ids[0], ids[i])
			}
		}
		list, err := s.ListSessions(ctxT(t), owner)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].ID != ids[0] {
			t.Errorf("after concurrent DefaultSession(%q): %d sessions, want exactly the default", owner, len(list))
		}
	}
}

// sizes are the copy sizes every backend must store and read back exactly.
var sizes = []int{
	0, 1, 2,
	store.ChunkSize - 1, store.ChunkSize, store.ChunkSize + 1,
	2*store.ChunkSize - 1, 2 * store.ChunkSize, 2*store.ChunkSize + 1,
	8<<20 + 12345,
}

func testSaveSizes(t *testing.T, s store.Store) {
	sess := createSession(t, s, alice)
	for _, n := range sizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			data := content(uint64(n), n)
			info := saveCopy(t, s, sess.ID, store.CopyMeta{Tool: "run_command", Complete: true}, data)
			if info.TotalBytes != int64(n) {
				t.Errorf("SaveCopy TotalBytes = %d, want %d", info.TotalBytes, n)
			}
			if want := countLines(data); info.Lines != want {
				t.Errorf("SaveCopy Lines = %d, want %d", info.Lines, want)
			}
			st, err := s.StatCopy(ctxT(t), sess.ID, info.ID)
			if err != nil {
				t.Fatalf("StatCopy: %v", err)
			}
			if st.TotalBytes != info.TotalBytes || st.Lines != info.Lines {
				t.Errorf("StatCopy = %d bytes, %d lines; SaveCopy said %d, %d", st.TotalBytes, st.Lines, info.TotalBytes, info.Lines)
			}
			// Read back in pages, then in pieces larger than a chunk.
			for _, step := range []int{4096, 3*store.ChunkSize + 7} {
				if n > 4*store.ChunkSize && step == 4096 {
					step = 65521 // a prime: reads straddle every chunk boundary
				}
				got := readAll(t, s, sess.ID, info.ID, int64(n), step)
				if !bytes.Equal(got, data) {
					t.Fatalf("read back in %d-byte pieces: %d bytes differ from the %d saved (first difference at %d)", step, len(got), n, firstDiff(got, data))
				}
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func testSaveShortReads(t *testing.T, s store.Store) {
	sess := createSession(t, s, alice)
	data := content(7, 2*store.ChunkSize+333)
	readers := map[string]func() io.Reader{
		"OneByte":  func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) },
		"Half":     func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
		"DataErr":  func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) },
		"NoWriter": func() io.Reader { return io.MultiReader(bytes.NewReader(data[:5]), bytes.NewReader(data[5:])) },
	}
	for name, mk := range readers {
		info, err := s.SaveCopy(ctxT(t), sess.ID, store.CopyMeta{}, mk())
		if err != nil {
			t.Fatalf("%s: SaveCopy: %v", name, err)
		}
		if got := readAll(t, s, sess.ID, info.ID, info.TotalBytes, 4096); !bytes.Equal(got, data) {
			t.Errorf("%s: read back %d bytes, want the %d saved", name, len(got), len(data))
		}
	}
}

func testReadCopyAt(t *testing.T, s store.Store) {
	sess := createSession(t, s, alice)
	const C = store.ChunkSize
	data := content(3, 3*C+100)
	total := int64(len(data))
	info := saveCopy(t, s, sess.ID, store.CopyMeta{}, data)

	tests := []struct {
		off    int64
		n      int
		wantN  int
		wantEr error // nil, io.EOF or store.ErrOffset
	}{
		{0, 10, 10, nil},
		{0, 4096, 4096, nil},
		{1, 1, 1, nil},
		{C - 1, 1, 1, nil},          // last byte of the first chunk
		{C, 1, 1, nil},              // first byte of the second chunk
		{C - 5, 10, 10, nil},        // straddles two chunks
		{C - 2048, 4096, 4096, nil}, // a page straddling
		{2*C - 1, 2, 2, nil},        // straddles the second boundary
		{C - 1, C + 2, C + 2, nil},  // spans three chunks
		{0, int(total), int(total), nil},
		{3 * C, 100, 100, nil},     // the short last chunk, whole
		{total - 5, 10, 5, io.EOF}, // short read at the end
		{total - 1, 4096, 1, io.EOF},
		{C - 10, int(total), int(total) - (C - 10), io.EOF},
		{0, int(total) + 1, int(total), io.EOF},
		{total, 10, 0, io.EOF}, // off == TotalBytes
		{total + 1, 10, 0, store.ErrOffset},
		{total + C, 10, 0, store.ErrOffset},
		{-1, 10, 0, store.ErrOffset},
		{-C, 10, 0, store.ErrOffset},
		{-1 << 62, 10, 0, store.ErrOffset},
		{1 << 62, 10, 0, store.ErrOffset},
	}
	for _, tt := range tests {
		p := bytes.Repeat([]byte{0xAA}, tt.n+8)[:tt.n]
		n, err := s.ReadCopyAt(ctxT(t), sess.ID, info.ID, p, tt.off)
		name := fmt.Sprintf("ReadCopyAt(off=%d, len=%d)", tt.off, tt.n)
		switch {
		case tt.wantEr == nil && n == len(p):
			// io.ReaderAt allows io.EOF with a full read that reaches the end.
			if err != nil && !(err == io.EOF && tt.off+int64(n) == total) {
				t.Errorf("%s: err = %v, want nil", name, err)
			}
		case tt.wantEr == io.EOF:
			if err != io.EOF {
				t.Errorf("%s: err = %v, want io.EOF", name, err)
			}
		case tt.wantEr != nil:
			if !errors.Is(err, tt.wantEr) {
				t.Errorf("%s: err = %v, want %v", name, err, tt.wantEr)
			}
		}
		if n != tt.wantN {
			t.Errorf("%s: n = %d, want %d", name, n, tt.wantN)
			continue
		}
		if n > 0 && !bytes.Equal(p[:n], data[tt.off:tt.off+int64(n)]) {
			t.Errorf("%s: wrong bytes (first difference at %d)", name, firstDiff(p[:n], data[tt.off:]))
		}
		if tail := p[tt.n:cap(p)]; !bytes.Equal(tail, bytes.Repeat([]byte{0xAA}, len(tail))) {
			t.Errorf("%s: wrote past len(p)", name)
		}
	}

	// The empty copy: offset 0 is its end.
	empty := saveCopy(t, s, sess.ID, store.CopyMeta{}, nil)
	if n, err := s.ReadCopyAt(ctxT(t), sess.ID, empty.ID, make([]byte, 10), 0); n != 0 || err != io.EOF {
		t.Errorf("ReadCopyAt(empty copy, 0) = %d, %v; want 0, io.EOF", n, err)
	}
	if _, err := s.ReadCopyAt(ctxT(t), sess.ID, empty.ID, make([]byte, 10), 1); !errors.Is(err, store.ErrOffset) {
		t.Errorf("ReadCopyAt(empty copy, 1): err = %v, want ErrOffset", err)
	}
	// An unknown copy is reported as such whatever the offset.
	for _, off := range []int64{-1, 0, 1 << 40} {
		_, err := s.ReadCopyAt(ctxT(t), sess.ID, store.NewID(store.CopyPrefix), make([]byte, 10), off)
		wantErr(t, fmt.Sprintf("ReadCopyAt(unknown copy, %d)", off), err, store.ErrCopyNotFound)
	}
}

// testStatReadCopyAt: StatReadCopyAt reads what ReadCopyAt reads, with the
// same n and error, and gives the copy's info as StatCopy does whenever the
// copy is found (at the end, past it, before it); nothing of a copy it
// cannot see.
func testStatReadCopyAt(t *testing.T, s store.Store) {
	sess := createSession(t, s, alice)
	const C = store.ChunkSize
	data := content(5, 2*C+300)
	total := int64(len(data))
	meta := store.CopyMeta{Tool: "run_command", Source: "cat big", Complete: false, OmittedBytes: 7, OmittedLines: 1}
	saved := saveCopy(t, s, sess.ID, meta, data)
	want, err := s.StatCopy(ctxT(t), sess.ID, saved.ID)
	if err != nil {
		t.Fatalf("StatCopy: %v", err)
	}
	sameInfo := func(name string, got store.CopyInfo) {
		t.Helper()
		if !got.CreatedAt.Equal(want.CreatedAt) {
			t.Errorf("%s: CreatedAt %v, want %v as StatCopy says", name, got.CreatedAt, want.CreatedAt)
		}
		got.CreatedAt = want.CreatedAt
		if got != want {
			t.Errorf("%s: info %+v, want %+v as StatCopy says", name, got, want)
		}
	}
	tests := []struct {
		off int64
		n   int
	}{
		{0, 4102},
		{C - 3, 4102},         // a page straddling chunks
		{C + 17, 4102},        // within the second chunk
		{total - 100, 4102},   // short at the end: io.EOF
		{total - 3, 4102},     // the last bytes
		{total, 4102},         // at the end: 0, io.EOF
		{total + 1, 4102},     // past the end: ErrOffset
		{total + 4096, 4102},  // far past it
		{-1, 4102},            // before the start: ErrOffset
		{-1 << 62, 10},        // far before
		{0, 0},                // an empty read
		{0, int(total) + 100}, // the whole copy and more
		{1 << 62, 10},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("StatReadCopyAt(off=%d, len=%d)", tt.off, tt.n)
		p := make([]byte, tt.n)
		info, n, err := s.StatReadCopyAt(ctxT(t), sess.ID, saved.ID, p, tt.off)
		q := make([]byte, tt.n)
		wantN, wantErr := s.ReadCopyAt(ctxT(t), sess.ID, saved.ID, q, tt.off)
		sameInfo(name, info)
		if n != wantN || (err == nil) != (wantErr == nil) || err == io.EOF != (wantErr == io.EOF) || errors.Is(err, store.ErrOffset) != errors.Is(wantErr, store.ErrOffset) {
			t.Errorf("%s = %d, %v; ReadCopyAt says %d, %v", name, n, err, wantN, wantErr)
			continue
		}
		if !bytes.Equal(p[:n], q[:wantN]) || n > 0 && !bytes.Equal(p[:n], data[tt.off:tt.off+int64(n)]) {
			t.Errorf("%s: wrong bytes", name)
		}
	}

	// The empty copy.
	empty := saveCopy(t, s, sess.ID, store.CopyMeta{Complete: true}, nil)
	if info, n, err := s.StatReadCopyAt(ctxT(t), sess.ID, empty.ID, make([]byte, 10), 0); n != 0 || err != io.EOF || info.ID != empty.ID || info.TotalBytes != 0 || !info.Complete {
		t.Errorf("StatReadCopyAt(empty copy, 0) = %+v, %d, %v; want its info, 0, io.EOF", info, n, err)
	}
	// Another session's copy, and one that does not exist: nothing of it.
	other := createSession(t, s, alice)
	for _, c := range []struct{ session, id string }{
		{other.ID, saved.ID},
		{sess.ID, store.NewID(store.CopyPrefix)},
		{store.NewID(store.SessionPrefix), saved.ID},
	} {
		for _, off := range []int64{-1, 0, 1 << 40} {
			info, n, err := s.StatReadCopyAt(ctxT(t), c.session, c.id, make([]byte, 10), off)
			if n != 0 || !errors.Is(err, store.ErrCopyNotFound) || info != (store.CopyInfo{}) {
				t.Errorf("StatReadCopyAt(%s, %s, %d) = %+v, %d, %v; want a zero info, 0, ErrCopyNotFound", c.session, c.id, off, info, n, err)
			}
		}
	}
}

func testReaderAt(t *testing.T, s store.Store) {
	sess := createSession(t, s, alice)
	// iotest.TestReader reads byte by byte: keep the copy small (chunk
	// boundaries are covered by ReadCopyAt and SaveSizes).
	data := content(11, 1500)
	info := saveCopy(t, s, sess.ID, store.CopyMeta{}, data)
	sr := io.NewSectionReader(store.ReaderAt(ctxT(t), s, sess.ID, info.ID), 0, info.TotalBytes)
	if err := iotest.TestReader(sr, data); err != nil {
		t.Errorf("iotest.TestReader over store.ReaderAt: %v", err)
	}
}

func testLines(t *testing.T, s store.Store) {
	sess := createSession(t, s, alice)
	const C = store.ChunkSize
	nl := func(n int, at ...int) []byte {
		b := bytes.Repeat([]byte{'x'}, n)
		for _, i := range at {
			b[i] = '\n'
		}
		return b
	}
	tests := []struct {
		name string
		data []byte
		want int64
	}{
		{"empty", nil, 0},
		{"one char", []byte("a"), 1},
		{"one line", []byte("a\n"), 1},
		{"newline only", []byte("\n"), 1},
		{"two newlines", []byte("\n\n"), 2},
		{"unterminated last", []byte("a\nb"), 2},
		{"terminated last", []byte("a\nb\n"), 2},
		{"crlf", []byte("a\r\nb\r\n"), 2},
		{"utf8", []byte("日本\n語"), 2},
		{"newline ends chunk", nl(C+5, C-1), 2},
		{"newline starts chunk", nl(C+5, C), 2},
		{"newline ends copy at chunk", nl(C, C-1), 1},
		{"many", bytes.Repeat([]byte("line\n"), 3*C/5+1), 3*C/5 + 1},
	}
	for _, tt := range tests {
		info := saveCopy(t, s, sess.ID, store.CopyMeta{}, tt.data)
		if info.Lines != tt.want {
			t.Errorf("%s: SaveCopy Lines = %d, want %d", tt.name, info.Lines, tt.want)
		}
		if st, err := s.StatCopy(ctxT(t), sess.ID, info.ID); err != nil || st.Lines != tt.want {
			t.Errorf("%s: StatCopy Lines = %d, %v; want %d", tt.name, st.Lines, err, tt.want)
		}
	}
}

func testMeta(t *testing.T, s store.Store) {
	sess := createSession(t, s, alice)
	metas := []store.CopyMeta{
		{},
		{Tool: "run_command", Source: "ls -la /", Complete: true},
		{Tool: "run_code", Source: "tools.run_command({command: 'seq 1e9'})", Complete: false, OmittedBytes: 1 << 40, OmittedLines: 123456789},
		{Tool: "github/search_issues", Source: "' OR 1=1 -- \"quoted\" 日本語 🙂\n\ttab\x00nul", Complete: true, OmittedBytes: 1},
		{Tool: strings.Repeat("t", 1000), Source: strings.Repeat("s", 100000)},
	}
	for i, m := range metas {
		data := content(uint64(i), i*1000)
		info := saveCopy(t, s, sess.ID, m, data)
		check := func(what string, got store.CopyInfo) {
			t.Helper()
			if got.ID != info.ID || got.Session != sess.ID || got.Tool != m.Tool || got.Source != m.Source ||
				got.Complete != m.Complete || got.OmittedBytes != m.OmittedBytes || got.OmittedLines != m.OmittedLines ||
				got.TotalBytes != int64(len(data)) || got.Lines != countLines(data) {
				t.Errorf("meta %d: %s = %.200v\nwant meta %.200v in session %s, %d bytes, %d lines", i, what, got, m, sess.ID, len(data), countLines(data))
			}
			if d := time.Since(got.CreatedAt); got.CreatedAt.IsZero() || d < -time.Minute || d > time.Hour {
				t.Errorf("meta %d: %s CreatedAt = %v, want about now", i, what, got.CreatedAt)
			}
		}
		check("SaveCopy", info)
		st, err := s.StatCopy(ctxT(t), sess.ID, info.ID)
		if err != nil {
			t.Fatalf("StatCopy: %v", err)
		}
		check("StatCopy", st)
		list, err := s.ListCopies(ctxT(t), sess.ID)
		if err != nil {
			t.Fatalf("ListCopies: %v", err)
		}
		if len(list) != i+1 {
			t.Fatalf("ListCopies: %d copies, want %d", len(list), i+1)
		}
		check("ListCopies", list[i])
	}
}

func testIDsUnique(t *testing.T, s store.Store) {
	a := createSession(t, s, alice)
	b := createSession(t, s, bob)
	seen := map[string]bool{}
	for i := range 40 {
		sess := a
		if i%2 == 1 {
			sess = b
		}
		info := saveCopy(t, s, sess.ID, store.CopyMeta{}, []byte("same bytes every time"))
		if !store.ValidID(store.CopyPrefix, info.ID) {
			t.Errorf("copy id %q is not a valid %q id", info.ID, store.CopyPrefix)
		}
		if seen[info.ID] {
			t.Errorf("copy id %q returned twice", info.ID)
		}
		seen[info.ID] = true
	}
}

func testListCopies(t *testing.T, s store.Store) {
	a := createSession(t, s, alice)
	b := createSession(t, s, alice)
	if list, err := s.ListCopies(ctxT(t), a.ID); err != nil || len(list) != 0 {
		t.Fatalf("ListCopies(new session) = %v, %v; want none, nil", list, err)
	}
	var want []string
	for i := range 5 {
		want = append(want, saveCopy(t, s, a.ID, store.CopyMeta{Source: fmt.Sprint(i)}, content(uint64(i), 100*i)).ID)
		saveCopy(t, s, b.ID, store.CopyMeta{}, []byte("other"))
	}
	list, err := s.ListCopies(ctxT(t), a.ID)
	if err != nil {
		t.Fatalf("ListCopies: %v", err)
	}
	var got []string
	for i, c := range list {
		got = append(got, c.ID)
		if c.Session != a.ID || c.TotalBytes != int64(100*i) {
			t.Errorf("ListCopies[%d] = session %s, %d bytes; want %s, %d", i, c.Session, c.TotalBytes, a.ID, 100*i)
		}
		if i > 0 && c.CreatedAt.Before(list[i-1].CreatedAt) {
			t.Errorf("ListCopies not oldest first at %d", i)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ListCopies = %v, want %v (oldest first, this session's only)", got, want)
	}
	// A session that does not exist has no copies to list; a backend may
	// say so with ErrSessionNotFound.
	for _, id := range append([]string{store.NewID(store.SessionPrefix)}, badIDs...) {
		list, err := s.ListCopies(ctxT(t), id)
		if len(list) != 0 || err != nil && !errors.Is(err, store.ErrSessionNotFound) {
			t.Errorf("ListCopies(%.20q) = %d copies, %v; want none", id, len(list), err)
		}
	}
}

// checkNotVisible asserts that session holds no copy id and that ReadCopyAt,
// StatCopy and StatReadCopyAt through it say ErrCopyNotFound.
func checkNotVisible(t *testing.T, s store.Store, session, id string) {
	t.Helper()
	if _, err := s.StatCopy(ctxT(t), session, id); !errors.Is(err, store.ErrCopyNotFound) {
		t.Errorf("StatCopy(%.20q, %.30q): err = %v, want ErrCopyNotFound", session, id, err)
	}
	for _, off := range []int64{0, 1} {
		if n, err := s.ReadCopyAt(ctxT(t), session, id, make([]byte, 16), off); n != 0 || !errors.Is(err, store.ErrCopyNotFound) {
			t.Errorf("ReadCopyAt(%.20q, %.30q, off %d) = %d, %v; want 0, ErrCopyNotFound", session, id, off, n, err)
		}
		if info, n, err := s.StatReadCopyAt(ctxT(t), session, id, make([]byte, 16), off); n != 0 || !errors.Is(err, store.ErrCopyNotFound) || info != (store.CopyInfo{}) {
			t.Errorf("StatReadCopyAt(%.20q, %.30q, off %d) = %+v, %d, %v; want a zero info, 0, ErrCopyNotFound", session, id, off, info, n, err)
		}
	}
}

func testCopyIsolation(t *testing.T, s store.Store) {
	a := createSession(t, s, alice)
	b := createSession(t, s, alice)
	c := createSession(t, s, bob)
	info := saveCopy(t, s, a.ID, store.CopyMeta{}, []byte("secret\n"))
	checkNotVisible(t, s, b.ID, info.ID)
	checkNotVisible(t, s, c.ID, info.ID)
	checkNotVisible(t, s, store.NewID(store.SessionPrefix), info.ID)
	for _, id := range badIDs {
		checkNotVisible(t, s, id, info.ID)
	}
	if list, _ := s.ListCopies(ctxT(t), b.ID); len(list) != 0 {
		t.Errorf("ListCopies(other session) = %d copies, want none", len(list))
	}
	// The error for another session's copy reads like a missing copy's.
	missing := store.NewID(store.CopyPrefix)
	_, errOther := s.StatCopy(ctxT(t), b.ID, info.ID)
	_, errMissing := s.StatCopy(ctxT(t), b.ID, missing)
	if errorShape(errOther, info.ID) != errorShape(errMissing, missing) {
		t.Errorf("another session's copy and a missing one read differently:\n  %v\n  %v", errOther, errMissing)
	}
	if _, err := s.StatCopy(ctxT(t), a.ID, info.ID); err != nil {
		t.Errorf("StatCopy in its own session: %v", err)
	}
}

// testCopySession: a copy is found among its owner's sessions, whichever
// holds it, and not for another owner, for an id never made or for one
// that is not an id; a deleted session's copies are gone.
func testCopySession(t *testing.T, s store.Store) {
	a := createSession(t, s, alice)
	a2 := createSession(t, s, alice)
	b := createSession(t, s, bob)
	first := saveCopy(t, s, a.ID, store.CopyMeta{}, []byte("alice's first\n"))
	info := saveCopy(t, s, a2.ID, store.CopyMeta{}, []byte("alice's\n"))
	other := saveCopy(t, s, b.ID, store.CopyMeta{}, []byte("bob's\n"))
	for _, tc := range []struct {
		owner, id, want string
	}{
		{alice, first.ID, a.ID},
		{alice, info.ID, a2.ID},
		{bob, other.ID, b.ID},
		{bob, info.ID, ""},
		{alice, other.ID, ""},
		{alice, store.NewID(store.CopyPrefix), ""},
		{"", info.ID, ""},
	} {
		got, err := s.CopySession(ctxT(t), tc.owner, tc.id)
		if tc.want == "" {
			wantErr(t, fmt.Sprintf("CopySession(%s, %s)", tc.owner, tc.id), err, store.ErrCopyNotFound)
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("CopySession(%s, %s) = %q, %v; want %q", tc.owner, tc.id, got, err, tc.want)
		}
	}
	for _, id := range badIDs {
		_, err := s.CopySession(ctxT(t), alice, id)
		wantErr(t, fmt.Sprintf("CopySession(%q)", id), err, store.ErrCopyNotFound)
	}
	if err := s.DeleteSession(ctxT(t), alice, a2.ID); err != nil {
		t.Fatal(err)
	}
	_, err := s.CopySession(ctxT(t), alice, info.ID)
	wantErr(t, "CopySession(copy of a deleted session)", err, store.ErrCopyNotFound)
}

func testForkIsolation(t *testing.T, s store.Store) {
	parent := createSession(t, s, alice)
	before := saveCopy(t, s, parent.ID, store.CopyMeta{}, []byte("before the fork"))
	fork, err := s.ForkSession(ctxT(t), alice, parent.ID)
	if err != nil {
		t.Fatalf("ForkSession: %v", err)
	}
	after := saveCopy(t, s, parent.ID, store.CopyMeta{}, []byte("after the fork"))
	checkNotVisible(t, s, fork.ID, before.ID)
	checkNotVisible(t, s, fork.ID, after.ID)
	if list, err := s.ListCopies(ctxT(t), fork.ID); err != nil || len(list) != 0 {
		t.Errorf("ListCopies(fork) = %d copies, %v; want none", len(list), err)
	}
	own := saveCopy(t, s, fork.ID, store.CopyMeta{}, []byte("the fork's own"))
	checkNotVisible(t, s, parent.ID, own.ID)
	if list, _ := s.ListSessions(ctxT(t), alice); len(list) == 2 && list[1].Copies != 1 {
		t.Errorf("fork lists %d copies, want 1", list[1].Copies)
	}
}

func testDeletedSessionCopies(t *testing.T, s store.Store) {
	a := createSession(t, s, alice)
	keep := createSession(t, s, alice)
	var ids []string
	for _, n := range []int{0, 10, store.ChunkSize + 1} {
		ids = append(ids, saveCopy(t, s, a.ID, store.CopyMeta{}, content(1, n)).ID)
	}
	kept := saveCopy(t, s, keep.ID, store.CopyMeta{}, []byte("kept"))
	if err := s.DeleteSession(ctxT(t), alice, a.ID); err != nil {
		t.Fatalf("DeleteSession: %v", err)
	}
	for _, id := range ids {
		checkNotVisible(t, s, a.ID, id)
	}
	if list, err := s.ListCopies(ctxT(t), a.ID); len(list) != 0 || err != nil && !errors.Is(err, store.ErrSessionNotFound) {
		t.Errorf("ListCopies(deleted session) = %d copies, %v; want none", len(list), err)
	}
	if _, err := s.SaveCopy(ctxT(t), a.ID, store.CopyMeta{}, strings.NewReader("x")); !errors.Is(err, store.ErrSessionNotFound) {
		t.Errorf("SaveCopy into a deleted session: err = %v, want ErrSessionNotFound", err)
	}
	p := make([]byte, 4)
	if n, err := s.ReadCopyAt(ctxT(t), keep.ID, kept.ID, p, 0); string(p[:n]) != "kept" || (err != nil && err != io.EOF) {
		t.Errorf("another session's copy after delete: %q, %v", p[:n], err)
	}
}

func testBadCopyIDs(t *testing.T, s store.Store) {
	sess := createSession(t, s, alice)
	info := saveCopy(t, s, sess.ID, store.CopyMeta{}, []byte("data"))
	ids := append([]string{
		store.NewID(store.CopyPrefix),
		strings.ToUpper(info.ID),
		info.ID + " ",
		" " + info.ID,
		info.ID[:len(info.ID)-1],
		info.ID + "a",
		store.CopyPrefix + "../../../../etc/passwd",
		sess.ID, // a session id is not a copy id
	}, badIDs...)
	for _, id := range ids {
		checkNotVisible(t, s, sess.ID, id)
	}
	if list, err := s.ListCopies(ctxT(t), sess.ID); err != nil || len(list) != 1 {
		t.Errorf("ListCopies after bad ids = %d copies, %v; want 1", len(list), err)
	}
}

// failingReader yields n bytes of content, then fails with err.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

var errBroken = errors.New("storetest: reader broke on purpose")

func testSaveReaderFails(t *testing.T, s store.Store) {
	sess := createSession(t, s, alice)
	good := saveCopy(t, s, sess.ID, store.CopyMeta{}, []byte("good"))
	for _, n := range []int{0, 1, store.ChunkSize, 2*store.ChunkSize + 10} {
		info, err := s.SaveCopy(ctxT(t), sess.ID, store.CopyMeta{Tool: "broken"}, &failingReader{content(5, n), errBroken})
		if !errors.Is(err, errBroken) {
			t.Errorf("SaveCopy with a reader failing after %d bytes: err = %v, want it to wrap the reader's error", n, err)
		}
		if info.ID != "" {
			checkNotVisible(t, s, sess.ID, info.ID)
		}
	}
	// A reader that panics is the caller's bug; an io.ErrUnexpectedEOF is
	// an ordinary error.
	_, err := s.SaveCopy(ctxT(t), sess.ID, store.CopyMeta{}, &failingReader{[]byte("abc"), io.ErrUnexpectedEOF})
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("SaveCopy with a reader failing with io.ErrUnexpectedEOF: err = %v", err)
	}
	list, err := s.ListCopies(ctxT(t), sess.ID)
	if err != nil {
		t.Fatalf("ListCopies: %v", err)
	}
	if len(list) != 1 || list[0].ID != good.ID {
		t.Errorf("after failed saves, ListCopies = %d copies; want only the good one", len(list))
	}
	if l, _ := s.ListSessions(ctxT(t), alice); len(l) != 1 || l[0].Copies != 1 || l[0].Bytes != 4 {
		t.Errorf("after failed saves, ListSessions = %+v; want 1 copy of 4 bytes", l)
	}
	// The store still works.
	saveCopy(t, s, sess.ID, store.CopyMeta{}, content(6, store.ChunkSize+1))
}

// cancellingReader yields data and cancels its context once it has yielded
// at least after bytes, then carries on yielding.
type cancellingReader struct {
	r      io.Reader
	n      int
	after  int
	cancel context.CancelFunc
}

func (r *cancellingReader) Read(p []byte) (int, error) {
	if r.n >= r.after {
		r.cancel()
	}
	n, err := r.r.Read(p)
	r.n += n
	return n, err
}

func testSaveCancelled(t *testing.T, s store.Store) {
	sess := createSession(t, s, alice)
	for _, after := range []int{0, 1, store.ChunkSize, 3*store.ChunkSize + 5} {
		ctx, cancel := context.WithCancel(ctxT(t))
		r := &cancellingReader{r: bytes.NewReader(content(9, 8*store.ChunkSize)), after: after, cancel: cancel}
		info, err := s.SaveCopy(ctx, sess.ID, store.CopyMeta{}, r)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("SaveCopy cancelled after %d bytes: err = %v, want context.Canceled", after, err)
		}
		if info.ID != "" {
			checkNotVisible(t, s, sess.ID, info.ID)
		}
	}
	// Already cancelled before the call.
	ctx, cancel := context.WithCancel(ctxT(t))
	cancel()
	if _, err := s.SaveCopy(ctx, sess.ID, store.CopyMeta{}, strings.NewReader("x")); err == nil {
		t.Errorf("SaveCopy with a cancelled context succeeded")
	}
	if list, err := s.ListCopies(ctxT(t), sess.ID); err != nil || len(list) != 0 {
		t.Errorf("after cancelled saves, ListCopies = %d copies, %v; want none", len(list), err)
	}
	saveCopy(t, s, sess.ID, store.CopyMeta{}, []byte("still works"))
}

func testSaveMissingSession(t *testing.T, s store.Store) {
	createSession(t, s, alice)
	_, err := s.SaveCopy(ctxT(t), store.NewID(store.SessionPrefix), store.CopyMeta{}, bytes.NewReader(content(1, 3*store.ChunkSize)))
	wantErr(t, "SaveCopy(unknown session)", err, store.ErrSessionNotFound)
	_, err = s.SaveCopy(ctxT(t), store.NewID(store.SessionPrefix), store.CopyMeta{}, strings.NewReader(""))
	wantErr(t, "SaveCopy(unknown session, empty)", err, store.ErrSessionNotFound)
}

func testConcurrent(t *testing.T, s store.Store) {
	const workers, perWorker = 8, 6
	sessions := []store.Session{createSession(t, s, alice), createSession(t, s, bob)}
	type saved struct {
		session string
		info    store.CopyInfo
		data    []byte
	}
	var (
		mu    sync.Mutex
		all   []saved
		wg    sync.WaitGroup
		errMu sync.Mutex
		errs  []error
	)
	fail := func(err error) {
		errMu.Lock()
		errs = append(errs, err)
		errMu.Unlock()
	}
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				sess := sessions[(w+i)%len(sessions)].ID
				data := content(uint64(w*100+i), (w*7919+i*104729)%(3*store.ChunkSize))
				info, err := s.SaveCopy(ctxT(t), sess, store.CopyMeta{Source: fmt.Sprint(w, i)}, bytes.NewReader(data))
				if err != nil {
					fail(fmt.Errorf("worker %d save %d: %w", w, i, err))
					return
				}
				mu.Lock()
				all = append(all, saved{sess, info, data})
				pick := all[(w+i)%len(all)]
				mu.Unlock()
				// Read back something saved by anyone so far.
				p := make([]byte, 4096)
				off := int64(len(pick.data) / 2)
				n, err := s.ReadCopyAt(ctxT(t), pick.session, pick.info.ID, p, off)
				if err != nil && err != io.EOF {
					fail(fmt.Errorf("worker %d read: %w", w, err))
					return
				}
				if !bytes.Equal(p[:n], pick.data[off:off+int64(n)]) {
					fail(fmt.Errorf("worker %d read wrong bytes of copy %s", w, pick.info.ID))
				}
				if _, err := s.ListSessions(ctxT(t), alice); err != nil {
					fail(fmt.Errorf("worker %d list: %w", w, err))
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	var n int
	for _, sess := range sessions {
		list, err := s.ListCopies(ctxT(t), sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		n += len(list)
	}
	if n != workers*perWorker {
		t.Errorf("after concurrent saves: %d copies listed, want %d", n, workers*perWorker)
	}
	for _, sv := range all {
		if got := readAll(t, s, sv.session, sv.info.ID, sv.info.TotalBytes, 3*store.ChunkSize); !bytes.Equal(got, sv.data) {
			t.Errorf("copy %s read back wrong after concurrent saves", sv.info.ID)
		}
	}
}
