package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/scrollback-dev/scrollback/store"
)

// unsavedStore stands in for a database that could not be opened, so that
// `scrollback run` still runs the command and shows its result: every save
// fails with the reason, which the result reports as recovery
// "unavailable". Nothing is read from it and nothing is kept.
type unsavedStore struct{ err error }

func (u unsavedStore) session(owner, id string) store.Session {
	if id == "" {
		id = "unsaved"
	}
	return store.Session{ID: id, Owner: owner, CreatedAt: time.Now()}
}

func (u unsavedStore) CreateSession(_ context.Context, owner string) (store.Session, error) {
	return u.session(owner, ""), nil
}

func (u unsavedStore) DefaultSession(_ context.Context, owner string) (store.Session, error) {
	return u.session(owner, ""), nil
}

func (u unsavedStore) GetSession(_ context.Context, owner, id string) (store.Session, error) {
	return u.session(owner, id), nil
}

func (u unsavedStore) ListSessions(context.Context, string) ([]store.Session, error) {
	return nil, u.err
}

func (u unsavedStore) ForkSession(context.Context, string, string) (store.Session, error) {
	return store.Session{}, u.err
}

func (u unsavedStore) DeleteSession(context.Context, string, string) error { return u.err }

func (u unsavedStore) SaveCopy(_ context.Context, _ string, _ store.CopyMeta, r io.Reader) (store.CopyInfo, error) {
	return store.CopyInfo{}, fmt.Errorf("the database could not be opened: %w", u.err)
}

func (u unsavedStore) StatCopy(context.Context, string, string) (store.CopyInfo, error) {
	return store.CopyInfo{}, store.ErrCopyNotFound
}

func (u unsavedStore) ReadCopyAt(context.Context, string, string, []byte, int64) (int, error) {
	return 0, store.ErrCopyNotFound
}

func (u unsavedStore) StatReadCopyAt(context.Context, string, string, []byte, int64) (store.CopyInfo, int, error) {
	return store.CopyInfo{}, 0, store.ErrCopyNotFound
}

func (u unsavedStore) ListCopies(context.Context, string) ([]store.CopyInfo, error) {
	return nil, u.err
}

func (u unsavedStore) Close() error { return nil }
