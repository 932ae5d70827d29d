package storetest

import (
	"bytes"
	"testing"

	"github.com/scrollback-dev/scrollback/store"
)

// pendingTests check store.Streamer: a copy saved in pieces is invisible
// until finished, whole once finished, and gone when aborted.
var pendingTests = []struct {
	name string
	fn   func(t *testing.T, s store.Store, st store.Streamer)
}{
	{"PendingInvisible", testPendingInvisible},
	{"PendingAbort", testPendingAbort},
	{"PendingErrors", testPendingErrors},
	{"PendingStats", testPendingStats},
}

func runPending(t *testing.T, newStore func(t *testing.T) store.Store) {
	for _, tt := range pendingTests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			st, ok := s.(store.Streamer)
			if !ok {
				t.Skip("the store does not implement store.Streamer")
			}
			tt.fn(t, s, st)
		})
	}
}

func testPendingInvisible(t *testing.T, s store.Store, st store.Streamer) {
	sess := createSession(t, s, alice)
	data := content(7, 3*store.ChunkSize+1234)
	p, err := st.BeginCopy(ctxT(t), sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Append(ctxT(t), data[:2*store.ChunkSize]); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListCopies(ctxT(t), sess.ID)
	if err != nil || len(list) != 0 {
		t.Errorf("ListCopies with a copy pending = %v, %v; want none", list, err)
	}
	got, err := s.GetSession(ctxT(t), alice, sess.ID)
	if err != nil || got.Copies != 0 || got.Bytes != 0 {
		t.Errorf("GetSession with a copy pending = %+v, %v; want no copies counted", got, err)
	}
	if h, ok := s.(store.Housekeeper); ok {
		if stats(t, h, sess.ID).Copies != 0 {
			t.Errorf("Stats count a pending copy")
		}
	}
	meta := store.CopyMeta{Tool: "run_command", Source: "make", Complete: false, OmittedBytes: 5, OmittedLines: 1}
	info, err := p.Finish(ctxT(t), meta, bytes.NewReader(data[2*store.ChunkSize:]))
	if err != nil {
		t.Fatal(err)
	}
	if info.TotalBytes != int64(len(data)) || info.Lines != countLines(data) || info.Tool != meta.Tool ||
		info.Source != meta.Source || info.Complete || info.OmittedBytes != 5 || info.OmittedLines != 1 {
		t.Errorf("Finish = %+v; want %d bytes, %d lines and the meta given", info, len(data), countLines(data))
	}
	stat, err := s.StatCopy(ctxT(t), sess.ID, info.ID)
	if err != nil || stat.TotalBytes != info.TotalBytes || stat.Lines != info.Lines {
		t.Errorf("StatCopy after Finish = %+v, %v; want %+v", stat, err, info)
	}
	wantReadable(t, s, sess.ID, info, data)
	if err := p.Abort(ctxT(t)); err != nil {
		t.Errorf("Abort after Finish: %v; want nothing done", err)
	}
	wantReadable(t, s, sess.ID, info, data)
}

func testPendingAbort(t *testing.T, s store.Store, st store.Streamer) {
	sess := createSession(t, s, alice)
	p, err := st.BeginCopy(ctxT(t), sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Append(ctxT(t), content(1, store.ChunkSize)); err != nil {
		t.Fatal(err)
	}
	if err := p.Abort(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Finish(ctxT(t), store.CopyMeta{}, bytes.NewReader(nil)); err == nil {
		t.Errorf("Finish after Abort succeeded")
	}
	list, err := s.ListCopies(ctxT(t), sess.ID)
	if err != nil || len(list) != 0 {
		t.Errorf("ListCopies after Abort = %v, %v; want none", list, err)
	}
	// A pending copy in a session deleted meanwhile cannot be finished,
	// and trying does not revive the session: a save into it says it is
	// gone, which is how a scrollback.Session notices it must move to a
	// fresh one.
	p, err = st.BeginCopy(ctxT(t), sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Append(ctxT(t), content(5, store.ChunkSize)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSession(ctxT(t), alice, sess.ID); err != nil {
		t.Fatal(err)
	}
	if err := p.Append(ctxT(t), content(6, store.ChunkSize)); err == nil {
		t.Errorf("Append to a copy whose session was deleted succeeded")
	}
	if _, err := p.Finish(ctxT(t), store.CopyMeta{}, bytes.NewReader([]byte("x"))); err == nil {
		t.Errorf("Finish of a copy whose session was deleted succeeded")
	}
	p.Abort(ctxT(t))
	_, err = s.SaveCopy(ctxT(t), sess.ID, store.CopyMeta{}, bytes.NewReader([]byte("x")))
	wantErr(t, "SaveCopy(session deleted under a pending copy)", err, store.ErrSessionNotFound)
	_, err = s.GetSession(ctxT(t), alice, sess.ID)
	wantErr(t, "GetSession(deleted under a pending copy)", err, store.ErrSessionNotFound)
	if ss, err := s.ListSessions(ctxT(t), alice); err != nil || len(ss) != 0 {
		t.Errorf("ListSessions after the session was deleted under a pending copy = %+v, %v; want none", ss, err)
	}
}

func testPendingErrors(t *testing.T, s store.Store, st store.Streamer) {
	_, err := st.BeginCopy(ctxT(t), store.NewID(store.SessionPrefix))
	wantErr(t, "BeginCopy(unknown session)", err, store.ErrSessionNotFound)
	_, err = st.BeginCopy(ctxT(t), "../x")
	wantErr(t, "BeginCopy(bad id)", err, store.ErrSessionNotFound)
	sess := createSession(t, s, alice)
	p, err := st.BeginCopy(ctxT(t), sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Append(ctxT(t), []byte("not a whole chunk")); err == nil {
		t.Errorf("Append of a partial chunk succeeded")
	}
	// The failed append left nothing behind: the copy is just its rest.
	info, err := p.Finish(ctxT(t), store.CopyMeta{}, bytes.NewReader([]byte("all\n")))
	if err != nil {
		t.Fatal(err)
	}
	wantReadable(t, s, sess.ID, info, []byte("all\n"))
}

// testPendingStats: Stats show pending copies apart, for the whole
// database and their session, so that the space a copy being saved takes
// (or one a killed process left, until a later open deletes it) is
// accounted for; a finished copy is no longer pending.
func testPendingStats(t *testing.T, s store.Store, st store.Streamer) {
	h, ok := s.(store.Housekeeper)
	if !ok {
		t.Skip("the store does not implement store.Housekeeper")
	}
	sess := createSession(t, s, alice)
	data := content(9, 2*store.ChunkSize)
	p, err := st.BeginCopy(ctxT(t), sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Append(ctxT(t), data); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", sess.ID} {
		got := stats(t, h, id)
		if got.Copies != 0 || got.PendingCopies != 1 || got.PendingStoredBytes <= 0 {
			t.Errorf("Stats(%q) with one copy pending: copies %d, pending %d (%d bytes stored); want 0, 1 and its bytes",
				id, got.Copies, got.PendingCopies, got.PendingStoredBytes)
		}
	}
	if _, err := p.Finish(ctxT(t), store.CopyMeta{Tool: "run_command"}, bytes.NewReader(nil)); err != nil {
		t.Fatal(err)
	}
	if got := stats(t, h, ""); got.Copies != 1 || got.PendingCopies != 0 || got.PendingStoredBytes != 0 {
		t.Errorf("Stats after Finish: copies %d, pending %d (%d bytes); want 1, 0, 0", got.Copies, got.PendingCopies, got.PendingStoredBytes)
	}
}
