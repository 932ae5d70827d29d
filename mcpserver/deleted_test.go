package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/scrollback-dev/scrollback"
)

// TestSessionDeletedUnderServer: a server whose session is deleted under
// it (`scrollback session rm`, or retention in another process) keeps
// saving: the next save moves it to a fresh session, _meta reports that
// session from then on, the new copies read back, and the deleted
// session's copies stay gone (not_found).
func TestSessionDeletedUnderServer(t *testing.T) {
	cs, sess, _ := newClient(t)
	gone := sess.ID()
	var before scrollback.RunCommandResult
	decode(t, call(t, cs, "run_command", map[string]any{"command": "seq 50000"}), &before)
	if err := sess.Engine().DeleteSession(context.Background(), scrollback.LocalOwner, gone); err != nil {
		t.Fatal(err)
	}

	res := call(t, cs, "run_command", map[string]any{"command": "seq 60000"})
	var rc scrollback.RunCommandResult
	decode(t, res, &rc)
	if rc.Recovery != scrollback.RecoveryAvailable || rc.OutputID == "" {
		t.Fatalf("after the session was deleted: recovery %q (%s), want available", rc.Recovery, rc.RecoveryError)
	}
	fresh, _ := res.Meta[MetaSession].(string)
	if fresh == "" || fresh == gone || fresh != sess.ID() {
		t.Fatalf("_meta %s = %q (the handle is on %s), was %s: want the fresh session", MetaSession, fresh, sess.ID(), gone)
	}
	res = call(t, cs, "read_tool_output", map[string]any{"id": rc.OutputID})
	var p scrollback.Page
	decode(t, res, &p)
	if !strings.HasPrefix(p.Text, "1\n2\n") || res.Meta[MetaSession] != fresh {
		t.Errorf("reading the new copy: %.20q, _meta %v", p.Text, res.Meta)
	}
	res = call(t, cs, "read_tool_output", map[string]any{"id": before.OutputID})
	if !res.IsError || res.Meta[MetaErrorKind] != scrollback.KindNotFound {
		t.Errorf("the deleted session's copy: isError %v, kind %v; want not_found", res.IsError, res.Meta[MetaErrorKind])
	}
	if _, err := sess.Engine().Session(context.Background(), scrollback.LocalOwner, gone); err == nil {
		t.Errorf("the deleted session %s was revived", gone)
	}
}
