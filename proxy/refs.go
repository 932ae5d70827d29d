package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/mcpserver"
)

// DefaultMaxRefBytes bounds the text that references put into the
// arguments of one upstream call when Options.MaxRefBytes is 0: the copy
// cap, so that any one copy fits whole.
const DefaultMaxRefBytes = scrollback.CopyCap

// Results passed by reference: a model that has a large result in a
// retained copy hands it to another tool without reading it, by giving the
// copy's URI as the argument. The proxy puts the copy's text there before
// the upstream is called.

// errRefRoom stops reading a copy that would take the references of one
// call past Options.MaxRefBytes.
var errRefRoom = errors.New("proxy: the references' text is over --max-ref-bytes")

// resolveRefs returns args with every string in it, at any depth, that is
// a reference to a retained copy of b's session (mcpserver.ParseOutputRef:
// scrollback://output/ID, or …/ID#bytes=A-B for the bytes from offset A up
// to offset B) replaced by the copy's text, or that range of it, all the
// references of the call together holding at most Options.MaxRefBytes.
// Arguments without a reference are returned untouched, byte for byte.
//
// It fails, and the upstream is not called, for a reference to a copy
// that b's session does not hold (another session's or principal's, or
// one that never existed: scrollback.ErrNotFound alike), to an incomplete
// copy unless the reference ends in #allow-incomplete, or to an offset
// inside a character (the error names the nearest valid ones), and for
// references whose text would be over the bound or a malformed one
// (scrollback.ErrArgument). Bytes of a copy that are not valid UTF-8
// become U+FFFD, as JSON strings hold text.
func (p *Proxy) resolveRefs(ctx context.Context, b *mcpserver.Binding, args json.RawMessage) (json.RawMessage, error) {
	max := p.opts.MaxRefBytes
	if max < 0 || !bytes.Contains(args, []byte("scrollback:")) {
		return args, nil
	}
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return args, nil // not JSON: the upstream says so
	}
	r := refResolver{ctx: ctx, b: b, room: max, max: max}
	v, changed, err := r.walk(v, "arguments")
	if err != nil || !changed {
		return args, err
	}
	var out bytes.Buffer
	e := json.NewEncoder(&out)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

type refResolver struct {
	ctx  context.Context
	b    *mcpserver.Binding
	room int64 // what the call's references may still hold
	max  int64
}

// walk replaces the references in v, reporting whether it replaced any;
// path names v for errors, as arguments.files[2].text.
func (r *refResolver) walk(v any, path string) (any, bool, error) {
	switch x := v.(type) {
	case string:
		ref, ok, err := mcpserver.ParseOutputRef(x)
		if !ok {
			return x, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
		text, err := r.text(ref, x, path)
		return text, err == nil, err
	case map[string]any:
		changed := false
		for k, e := range x {
			ne, c, err := r.walk(e, path+"."+k)
			if err != nil {
				return nil, false, err
			}
			if c {
				x[k], changed = ne, true
			}
		}
		return x, changed, nil
	case []any:
		changed := false
		for i, e := range x {
			ne, c, err := r.walk(e, path+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, false, err
			}
			if c {
				x[i], changed = ne, true
			}
		}
		return x, changed, nil
	}
	return v, false, nil
}

// text is the text a reference stands for.
func (r *refResolver) text(ref mcpserver.OutputRef, s, path string) (string, error) {
	const op = "reference"
	where := fmt.Sprintf("the reference %s in %s", s, path)
	sess, err := r.b.Existing(r.ctx)
	if err == nil && sess == nil {
		err = &scrollback.Error{Op: op, Err: scrollback.ErrNoOutput, Msg: scrollback.ErrNoOutput.Error() + ": " + strconv.Quote(ref.ID),
			Hint: "this session has retained nothing yet"}
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	var buf bytes.Buffer
	info, err := sess.CatRange(r.ctx, op, ref.ID, ref.From, ref.To, &roomWriter{w: &buf, room: r.room})
	if errors.Is(err, errRefRoom) {
		return "", fmt.Errorf("%w: %s: the references of this call would put more than %d bytes into its arguments (--max-ref-bytes; this copy alone holds %d); pass a byte range, as %s#bytes=0-%d",
			scrollback.ErrArgument, where, r.max, info.TotalBytes, mcpserver.OutputURI(ref.ID), min(r.room, info.TotalBytes))
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	if !info.Complete && !ref.AllowIncomplete {
		return "", fmt.Errorf("%w: %s: that copy is incomplete (complete=false: it lacks part of what its tool produced, a cap was crossed), so the tool would get less than the whole result; end the reference with #allow-incomplete to pass it anyway",
			scrollback.ErrArgument, where)
	}
	r.room -= int64(buf.Len())
	return buf.String(), nil
}

// roomWriter writes at most room bytes to w, failing with errRefRoom past
// them.
type roomWriter struct {
	w    *bytes.Buffer
	room int64
}

func (w *roomWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > w.room {
		return 0, errRefRoom
	}
	w.room -= int64(len(p))
	return w.w.Write(p)
}
