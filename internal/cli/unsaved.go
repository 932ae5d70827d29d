package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
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

func (u unsavedStore) CopySession(context.Context, string, string) (string, error) {
	return "", store.ErrCopyNotFound
}

func (u unsavedStore) ListCopies(context.Context, string) ([]store.CopyInfo, error) {
	return nil, u.err
}

func (u unsavedStore) Close() error { return nil }

// keptStore wraps run's store so that an output it fails to save (a
// database locked past its busy timeout, full, read-only or not opened) is
// not lost: it is written to a file of its own in the temporary directory,
// which run names on stderr. Before, run said the copy was not saved and
// the bytes its preview left out were gone, however long the command ran.
type keptStore struct {
	store.Store
	dir string // where kept files go ("": os.TempDir())

	// A save that has waited slowAfter is said on stderr, once: a
	// database locked by another process kept run silent for tens of
	// seconds after its command ended, each of the store's tries waiting
	// out its busy timeout.
	stderr    io.Writer
	slowAfter time.Duration
	mu        sync.Mutex // held while the note is written
	said      bool

	// What the last failed save left: the file that holds the output, or
	// why none could be written.
	path     string
	size     int64
	complete bool // the file holds the whole output, not a head and tail past the copy cap
	keepErr  error
}

// keepUnsaved wraps st, keeping what it implements of store.Streamer, the
// one optional interface the engine asks a store for (spilling a running
// command's output as it comes).
func keepUnsaved(st store.Store, dir string, stderr io.Writer) (store.Store, *keptStore) {
	k := &keptStore{Store: st, dir: dir, stderr: stderr, slowAfter: slowSave}
	if s, ok := st.(store.Streamer); ok {
		return keptStreamer{k, s}, k
	}
	return k, k
}

// slowSave is how long a save may wait for the database before run says
// that it is waiting.
const slowSave = 3 * time.Second

type keptStreamer struct {
	*keptStore
	s store.Streamer
}

func (k keptStreamer) BeginCopy(ctx context.Context, session string) (store.PendingCopy, error) {
	defer k.waiting()()
	p, err := k.s.BeginCopy(ctx, session)
	if err != nil {
		return p, err
	}
	return keptPending{p, k.keptStore}, nil
}

// keptPending is a pending copy whose Finish says when it waits.
type keptPending struct {
	store.PendingCopy
	k *keptStore
}

func (p keptPending) Finish(ctx context.Context, meta store.CopyMeta, r io.Reader) (store.CopyInfo, error) {
	defer p.k.waiting()()
	return p.PendingCopy.Finish(ctx, meta, r)
}

// waiting starts the clock of a save; the function it returns stops it.
// A save still waiting after slowAfter is said on stderr, once.
func (k *keptStore) waiting() (stop func()) {
	t := time.AfterFunc(k.slowAfter, func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if !k.said {
			k.said = true
			fmt.Fprintf(k.stderr, "scrollback run: still waiting for the database to take the output (another process may hold its lock); should it not, the output is kept in a file\n")
		}
	})
	return func() {
		t.Stop()
		k.mu.Lock() // a note being written is written whole first
		k.mu.Unlock()
	}
}

// SaveCopy saves the copy; when that fails, it writes the copy to a file
// too. The engine's last save of a command's output is a SaveCopy of the
// whole output from a bytes.Reader (a pending copy that failed to finish
// falls back to it), so rewinding r gives all of it.
func (k *keptStore) SaveCopy(ctx context.Context, session string, meta store.CopyMeta, r io.Reader) (store.CopyInfo, error) {
	stop := k.waiting()
	info, err := k.Store.SaveCopy(ctx, session, meta, r)
	stop()
	if err == nil {
		return info, nil
	}
	rs, ok := r.(io.ReadSeeker)
	if !ok {
		return info, err
	}
	if _, serr := rs.Seek(0, io.SeekStart); serr != nil {
		return info, err
	}
	k.path, k.size, k.keepErr = keepInFile(k.dir, rs)
	k.complete = meta.Complete
	return info, err
}

// keepInFile writes r to a new file in dir, readable by its owner only (an
// output may hold secrets), and returns its path and size.
func keepInFile(dir string, r io.Reader) (string, int64, error) {
	f, err := os.CreateTemp(dir, "scrollback-unsaved-*.out")
	if err != nil {
		return "", 0, err
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", 0, err
	}
	return f.Name(), n, nil
}

// note is the line run says on stderr after a failed save: where the
// output is kept, or that it could not be kept either; "" when no save
// failed.
func (k *keptStore) note() string {
	switch {
	case k.path != "" && k.complete:
		return fmt.Sprintf("the whole output (%d bytes) is kept in %s instead", k.size, k.path)
	case k.path != "":
		return fmt.Sprintf("the copy of the output (%d bytes: its head and tail around the gap the footer describes) is kept in %s instead", k.size, k.path)
	case k.keepErr != nil:
		return fmt.Sprintf("it could not be kept in a file either (%v): the bytes the preview does not show are lost; run the command again once the database can be written", k.keepErr)
	}
	return ""
}
