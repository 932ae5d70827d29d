package postgres

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/scrollback-dev/scrollback/store"
)

// TestMigrateV1 makes a database as the release before compression and
// quotas did (schema version 1, raw chunks written with version 1's
// columns), then opens it with this program: the old copy reads back
// unchanged, its stored size is known, and a new save is compressed
// beside it.
func TestMigrateV1(t *testing.T) {
	u := newDatabase(t)
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if err := migrateWith(ctx, pool, migrations[:1]); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for i := range 10000 {
		fmt.Fprintf(&want, "line %d: héllo ✓\n", i)
	}
	const session, id = "s_wm2wtvdtfe2l5mehgf2vojz24i", "out_rdanxb3jecchl7dcd4t4iik7rm"
	if _, err := pool.Exec(ctx, "INSERT INTO sessions (id, owner) VALUES ($1, $2)", session, []byte("local")); err != nil {
		t.Fatal(err)
	}
	var pk int64
	if err := pool.QueryRow(ctx, `INSERT INTO copies (session, id, tool, source, total_bytes, lines, complete, omitted_bytes, omitted_lines)
VALUES ($1, $2, 'run_command', 'seq-like', $3, 10000, true, 0, 0) RETURNING pk`, session, id, want.Len()).Scan(&pk); err != nil {
		t.Fatal(err)
	}
	for seq := 0; seq*store.ChunkSize < want.Len(); seq++ {
		chunk := want.Bytes()[seq*store.ChunkSize : min((seq+1)*store.ChunkSize, want.Len())]
		if _, err := pool.Exec(ctx, "INSERT INTO chunks (copy, seq, data) VALUES ($1, $2, $3)", pk, seq, chunk); err != nil {
			t.Fatal(err)
		}
	}
	pool.Close()

	db := openTest(t, u)
	got := make([]byte, want.Len()+1)
	if n, err := db.ReadCopyAt(ctx, session, id, got, 0); err != io.EOF || !bytes.Equal(got[:n], want.Bytes()) {
		t.Fatalf("ReadCopyAt(v1 copy) = %d bytes, %v; want it as written", n, err)
	}
	ss, err := db.ListSessions(ctx, "local")
	if err != nil || len(ss) != 1 || ss[0].LastUsedAt.Before(ss[0].CreatedAt) {
		t.Fatalf("ListSessions = %+v, %v; want the one session, last used no earlier than made", ss, err)
	}
	st, err := db.Stats(ctx, session)
	if err != nil || st.StoredBytes != int64(want.Len()) {
		t.Fatalf("Stats = %+v, %v; want the v1 copy stored raw at %d bytes", st, err, want.Len())
	}
	info, err := db.SaveCopy(ctx, session, store.CopyMeta{}, bytes.NewReader(want.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if c := count(t, db, "SELECT count(*) FROM chunks k JOIN copies c ON c.pk = k.copy WHERE c.id = $1 AND k.codec = 2", info.ID); c == 0 {
		t.Errorf("the new copy has no compressed chunk")
	}
	p := make([]byte, 4096)
	if n, err := db.ReadCopyAt(ctx, session, info.ID, p, 100_000); err != nil || !bytes.Equal(p[:n], want.Bytes()[100_000:104_096]) {
		t.Errorf("ReadCopyAt(new copy) = %d, %v; want its bytes", n, err)
	}
	if v := count(t, db, "SELECT max(version) FROM schema_migrations"); v != int64(len(migrations)) {
		t.Errorf("schema version %d after open, want %d", v, len(migrations))
	}
}

// TestAbandonedPendingDeleted: a pending copy whose writer died (no append
// for store.StalePending) is deleted, with its chunks, by the next Open;
// a fresh one stays, and neither was ever visible.
func TestAbandonedPendingDeleted(t *testing.T) {
	u := newDatabase(t)
	db := openTest(t, u)
	ctx := t.Context()
	sess := mustSession(t, db, "me")
	var ids []string
	for range 2 {
		p, err := db.BeginCopy(ctx, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Append(ctx, payload(store.ChunkSize)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.(*pendingCopy).info.ID)
	}
	if _, err := db.pool.Exec(ctx, "UPDATE copies SET last_read_at = clock_timestamp() - $1::interval WHERE id = $2",
		fmt.Sprintf("%d seconds", int64((store.StalePending+time.Minute)/time.Second)), ids[0]); err != nil {
		t.Fatal(err)
	}
	again := openTest(t, u)
	if c := count(t, again, "SELECT count(*) FROM copies WHERE id = $1", ids[0]); c != 0 {
		t.Errorf("the abandoned pending copy is still there after Open")
	}
	if c := count(t, again, "SELECT count(*) FROM chunks k JOIN copies c ON c.pk = k.copy WHERE c.id = $1 AND c.pending", ids[1]); c != 1 {
		t.Errorf("the fresh pending copy has %d chunks after Open, want its 1", c)
	}
	if c := count(t, again, "SELECT count(*) FROM chunks"); c != 1 {
		t.Errorf("%d chunks in the database, want only the fresh copy's 1", c)
	}
	for _, id := range ids {
		if _, err := again.StatCopy(ctx, sess.ID, id); !errors.Is(err, store.ErrCopyNotFound) {
			t.Errorf("StatCopy(pending %s) = %v, want ErrCopyNotFound", id, err)
		}
	}
}

// TestClockSetBack: times from before the server's clock was set back (or
// from a host whose clock runs ahead) do not stay in the future for good:
// a session last used "next year" outlived retention until then, and a
// pending copy with such a heartbeat was never found abandoned.
func TestClockSetBack(t *testing.T) {
	u := newDatabase(t)
	db := openTest(t, u)
	ctx := t.Context()
	sess := mustSession(t, db, "me")
	p, err := db.BeginCopy(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Append(ctx, payload(store.ChunkSize)); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"UPDATE copies SET last_read_at = clock_timestamp() + interval '1 year'",
		"UPDATE sessions SET last_used_at = clock_timestamp() + interval '1 year'",
	} {
		if _, err := db.pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	again := openTest(t, u)
	if c := count(t, again, "SELECT count(*) FROM copies WHERE pending"); c != 0 {
		t.Errorf("a pending copy last appended to a year from now is not deleted as abandoned")
	}
	// Retention counts from now: a pass with a cutoff an hour ahead
	// deletes the session, as if last used now.
	n, err := again.DeleteIdle(ctx, time.Now().Add(time.Hour))
	if err != nil || n.Sessions != 1 {
		t.Errorf("DeleteIdle(an hour from now) of a session last used a year from now: %+v, %v; want it deleted (1)", n, err)
	}
}
