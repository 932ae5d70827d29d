package codemode

import (
	"context"
	"encoding/json"
	"os"
	"testing"
)

// TestMain lets the test binary serve as a Code Mode worker when a Pool
// starts it (the default command: this executable with WorkerArg).
func TestMain(m *testing.M) {
	WorkerMain()
	os.Exit(m.Run())
}

func TestPoolSmoke(t *testing.T) {
	p := NewPool(PoolOptions{Size: 1})
	defer p.Close()
	echo := Tool{Name: "echo", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) { return args, nil }}
	res := p.Run(context.Background(), "const r = await tools.echo({a: 1}); console.log('hi'); return r.a + 1", []Tool{echo}, Options{})
	if res.Error != nil || string(res.Value) != "2" || res.Logs != "hi\n" {
		t.Fatalf("%+v %v", res, res.Error)
	}
	for _, l := range p.Layers() {
		t.Logf("%s %v %s", l.Name, l.Active, l.Detail)
	}
}
