package storetest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/storetest"
)

// TestMemStore runs the suite against memStore, a minimal reference
// backend, to show that the suite asks for nothing beyond the Store contract.
func TestMemStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return newMemStore() })
}

// memStore keeps everything in maps under one mutex. It buffers a copy
// while saving (fine for a test double; real backends stream).
type memStore struct {
	mu       sync.Mutex
	sessions map[string]*memSession
	order    []string
	defaults map[string]string
}

type memSession struct {
	store.Session
	copies []*memCopy
}

type memCopy struct {
	info store.CopyInfo
	data []byte
}

func newMemStore() *memStore {
	return &memStore{sessions: map[string]*memSession{}, defaults: map[string]string{}}
}

func (m *memStore) newSession(owner, parent string) store.Session {
	s := &memSession{Session: store.Session{ID: store.NewID(store.SessionPrefix), Owner: owner, Parent: parent, CreatedAt: time.Now()}}
	m.sessions[s.ID] = s
	m.order = append(m.order, s.ID)
	return s.Session
}

func (m *memStore) CreateSession(ctx context.Context, owner string) (store.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.newSession(owner, ""), nil
}

func (m *memStore) DefaultSession(ctx context.Context, owner string) (store.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id, ok := m.defaults[owner]; ok {
		if s, ok := m.sessions[id]; ok {
			return s.withCounts(), nil
		}
	}
	s := m.newSession(owner, "")
	m.defaults[owner] = s.ID
	return s, nil
}

func (s *memSession) withCounts() store.Session {
	out := s.Session
	for _, c := range s.copies {
		out.Copies++
		out.Bytes += c.info.TotalBytes
	}
	return out
}

func (m *memStore) get(owner, id string) (*memSession, error) {
	s, ok := m.sessions[id]
	if !ok || s.Owner != owner {
		return nil, store.ErrSessionNotFound
	}
	return s, nil
}

func (m *memStore) GetSession(ctx context.Context, owner, id string) (store.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.get(owner, id)
	if err != nil {
		return store.Session{}, err
	}
	return s.withCounts(), nil
}

func (m *memStore) ListSessions(ctx context.Context, owner string) ([]store.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.Session
	for _, id := range m.order {
		if s, ok := m.sessions[id]; ok && s.Owner == owner {
			out = append(out, s.withCounts())
		}
	}
	return out, nil
}

func (m *memStore) ForkSession(ctx context.Context, owner, id string) (store.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.get(owner, id); err != nil {
		return store.Session{}, err
	}
	return m.newSession(owner, id), nil
}

func (m *memStore) DeleteSession(ctx context.Context, owner, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.get(owner, id); err != nil {
		return err
	}
	delete(m.sessions, id)
	return nil
}

func (m *memStore) SaveCopy(ctx context.Context, session string, meta store.CopyMeta, r io.Reader) (store.CopyInfo, error) {
	var buf bytes.Buffer
	p := make([]byte, 1000)
	for {
		if err := ctx.Err(); err != nil {
			return store.CopyInfo{}, err
		}
		n, err := r.Read(p)
		buf.Write(p[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return store.CopyInfo{}, fmt.Errorf("mem: save copy: %w", err)
		}
	}
	data := buf.Bytes()
	lines := int64(bytes.Count(data, []byte{'\n'}))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		lines++
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[session]
	if !ok {
		return store.CopyInfo{}, store.ErrSessionNotFound
	}
	c := &memCopy{data: data, info: store.CopyInfo{
		ID: store.NewID(store.CopyPrefix), Session: session, Tool: meta.Tool, Source: meta.Source,
		TotalBytes: int64(len(data)), Lines: lines, Complete: meta.Complete,
		OmittedBytes: meta.OmittedBytes, OmittedLines: meta.OmittedLines, CreatedAt: time.Now(),
	}}
	s.copies = append(s.copies, c)
	return c.info, nil
}

func (m *memStore) find(session, id string) (*memCopy, error) {
	if s, ok := m.sessions[session]; ok {
		for _, c := range s.copies {
			if c.info.ID == id {
				return c, nil
			}
		}
	}
	return nil, store.ErrCopyNotFound
}

func (m *memStore) StatCopy(ctx context.Context, session, id string) (store.CopyInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.find(session, id)
	if err != nil {
		return store.CopyInfo{}, err
	}
	return c.info, nil
}

func (m *memStore) ReadCopyAt(ctx context.Context, session, id string, p []byte, off int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.find(session, id)
	if err != nil {
		return 0, err
	}
	if off < 0 || off > int64(len(c.data)) {
		return 0, store.ErrOffset
	}
	n := copy(p, c.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (m *memStore) StatReadCopyAt(ctx context.Context, session, id string, p []byte, off int64) (store.CopyInfo, int, error) {
	info, err := m.StatCopy(ctx, session, id)
	if err != nil {
		return store.CopyInfo{}, 0, err
	}
	n, err := m.ReadCopyAt(ctx, session, id, p, off)
	return info, n, err
}

func (m *memStore) ListCopies(ctx context.Context, session string) ([]store.CopyInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[session]
	if !ok {
		return nil, nil
	}
	var out []store.CopyInfo
	for _, c := range s.copies {
		out = append(out, c.info)
	}
	return out, nil
}

func (m *memStore) CopySession(ctx context.Context, owner, id string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for sid, s := range m.sessions {
		if s.Owner != owner {
			continue
		}
		if _, err := m.find(sid, id); err == nil {
			return sid, nil
		}
	}
	return "", store.ErrCopyNotFound
}

func (m *memStore) Close() error { return nil }
