package scrollback

import (
	"context"
	"time"

	"github.com/scrollback-dev/scrollback/capture"
	"github.com/scrollback-dev/scrollback/store"
)

// spillInterval is how often a running command's settled output is looked
// at and, in whole chunks, stored.
const spillInterval = 20 * time.Millisecond

// spill stores a running command's settled head (capture.Settled) in a
// pending copy as it arrives, a whole chunk at a time, so that when the
// command ends only the rest is left to save: the save overlaps the
// command instead of following it. Nobody sees the pending copy until
// retain finishes it; if the command's output fits the preview, retain
// aborts it; if spilling fails, what was spilled is aborted and the copy is
// saved whole, as without spilling.
type spill struct {
	ctx     context.Context
	cp      *capture.Capture
	st      store.Streamer
	session string
	stop    chan struct{}
	done    chan struct{}

	// Owned by the loop until done is closed.
	pending store.PendingCopy // nil until the first whole chunk
	written int               // bytes of the copy appended to pending
	err     error
}

// startSpill starts spilling cp into a pending copy of this session, or
// returns nil when the store cannot save in pieces.
func (s *Session) startSpill(ctx context.Context, cp *capture.Capture) *spill {
	st, ok := s.e.store.(store.Streamer)
	if !ok {
		return nil
	}
	sp := &spill{ctx: context.WithoutCancel(ctx), cp: cp, st: st, session: s.info.ID,
		stop: make(chan struct{}), done: make(chan struct{})}
	go sp.loop()
	return sp
}

func (sp *spill) loop() {
	defer close(sp.done)
	t := time.NewTicker(spillInterval)
	defer t.Stop()
	for sp.err == nil {
		select {
		case <-sp.stop:
			return
		case <-t.C:
			sp.step()
		}
	}
}

// step appends the whole chunks settled since the last step.
func (sp *spill) step() {
	settled := sp.cp.Settled()
	n := len(settled) / store.ChunkSize * store.ChunkSize
	if n <= sp.written {
		return
	}
	if sp.pending == nil {
		p, err := sp.st.BeginCopy(sp.ctx, sp.session)
		if err != nil {
			sp.err = err
			return
		}
		sp.pending = p
	}
	if err := sp.pending.Append(sp.ctx, settled[sp.written:n]); err != nil {
		sp.err = err
		return
	}
	sp.written = n
}

// end stops spilling and returns the pending copy and how many leading
// bytes of the copy it holds: nil, 0 when nothing was spilled, or when
// spilling failed (what it stored is then deleted).
func (sp *spill) end() (store.PendingCopy, int) {
	if sp == nil {
		return nil, 0
	}
	close(sp.stop)
	<-sp.done
	if sp.err != nil {
		if sp.pending != nil {
			sp.pending.Abort(sp.ctx)
		}
		return nil, 0
	}
	return sp.pending, sp.written
}
