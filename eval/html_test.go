package eval_test

import (
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback/eval"
	"github.com/scrollback-dev/scrollback/eval/evaltest"
)

// The report page renders in a real browser, without the network: headless
// Chromium's screenshot shows bars of both modes' colours. scripts/test.sh
// installs Debian's chromium; elsewhere the test is skipped.
func TestHTMLInChromium(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		if os.Getenv("SCROLLBACK_REQUIRE_CHROMIUM") != "" {
			t.Fatal("no chromium on PATH, and SCROLLBACK_REQUIRE_CHROMIUM is set")
		}
		t.Skip("no chromium on PATH (scripts/test.sh installs Debian's chromium)")
	}
	m := models(t, evaltest.Diligent{})["openai"]
	rep, err := eval.Run(context.Background(), eval.Config{Model: m, Scenarios: pick(t, "paginated-source", "foreign-id", "head-pipeline")})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteHTML(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1000,700",
		"--screenshot="+shot, "file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err = os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{eval.ColorScrollback, eval.ColorSpill, eval.ColorTruncate} {
		if n := countColor(img, c); n < 300 {
			t.Errorf("the screenshot has %d pixels of %s: the chart's bars are not drawn", n, c)
		}
	}
}

// countColor counts the pixels within a small distance of the colour #rrggbb.
func countColor(img image.Image, hex string) int {
	v, _ := strconv.ParseUint(hex[1:], 16, 32)
	r0, g0, b0 := int(v>>16), int(v>>8&0xff), int(v&0xff)
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if abs(int(r>>8)-r0) < 12 && abs(int(g>>8)-g0) < 12 && abs(int(bl>>8)-b0) < 12 {
				n++
			}
		}
	}
	return n
}

func abs(x int) int { return max(x, -x) }
