package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrollback-dev/scrollback/eval"
	"github.com/scrollback-dev/scrollback/eval/evaltest"
)

func scenarios(t testing.TB) []*eval.Scenario {
	t.Helper()
	all, err := eval.Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// serve starts a scripted model with policy p and returns it and its
// base URL.
func serve(t testing.TB, p evaltest.Policy) (*evaltest.Server, string) {
	t.Helper()
	s := evaltest.NewServer(p, scenarios(t))
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, hs.URL + "/v1"
}

func models(t testing.TB, p evaltest.Policy) map[string]eval.Model {
	_, url := serve(t, p)
	return map[string]eval.Model{
		"openai":    eval.NewOpenAI(url, "", "scripted"),
		"anthropic": eval.NewAnthropic(url, "key", "scripted"),
	}
}

func TestSuite(t *testing.T) {
	all := scenarios(t)
	if len(all) < 17 {
		t.Errorf("%d scenarios, want at least 17", len(all))
	}
	for _, sc := range all {
		if sc.About == "" || len(sc.Source) == 0 && sc.Setup.Foreign == "" && !strings.Contains(sc.Question, "file") {
			t.Errorf("%s: every scenario says what it is about, and names its source unless it reads a file or another session", sc.Name)
		}
	}
}

// The diligent policy answers every scenario right through scrollback, and
// fails, in the truncate baseline, every scenario whose evidence lies past
// the cut: the checkers can tell the two modes apart. The lazy policy, which
// answers from the preview, fails every scenario whose evidence is not in
// the preview, in both modes: every such checker can fail.
func TestPoliciesAgainstTheSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole suite four times")
	}
	all := scenarios(t)
	for _, tc := range []struct {
		policy string
		mode   eval.Mode
		// must says whether a scenario's run must be correct (+1), must be
		// wrong (-1), or may be either (0).
		must func(*eval.Scenario) int
	}{
		{"diligent", eval.ModeScrollback, func(*eval.Scenario) int { return +1 }},
		{"diligent", eval.ModeTruncate, func(sc *eval.Scenario) int { return map[bool]int{true: -1, false: +1}[sc.PastCut] }},
		{"lazy", eval.ModeScrollback, func(sc *eval.Scenario) int { return map[bool]int{true: -1, false: 0}[sc.PastPreview || sc.Evidence] }},
		{"lazy", eval.ModeTruncate, func(sc *eval.Scenario) int {
			return map[bool]int{true: -1, false: 0}[sc.PastCut || sc.PastPreview || sc.Evidence]
		}},
	} {
		t.Run(tc.policy+"/"+string(tc.mode), func(t *testing.T) {
			m := models(t, evaltest.Policies[tc.policy])["openai"]
			rep, err := eval.Run(context.Background(), eval.Config{Model: m, Scenarios: all, Modes: []eval.Mode{tc.mode}})
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]*eval.Scenario{}
			for _, sc := range all {
				byName[sc.Name] = sc
			}
			for _, r := range rep.Runs {
				switch tc.must(byName[r.Scenario]) {
				case +1:
					if !r.Correct {
						t.Errorf("%s: wrong (%s); answer %q", r.Scenario, r.Why, r.Answer)
					}
				case -1:
					if r.Correct {
						t.Errorf("%s: correct (%q), but this policy cannot have the evidence in this mode", r.Scenario, r.Answer)
					}
				}
				if r.ReRuns != 0 {
					t.Errorf("%s: %d re-runs", r.Scenario, r.ReRuns)
				}
			}
		})
	}
}

// The Anthropic protocol carries the same runs: the diligent policy passes
// every scenario through it too.
func TestAnthropicProvider(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole suite")
	}
	m := models(t, evaltest.Diligent{})["anthropic"]
	rep, err := eval.Run(context.Background(), eval.Config{Model: m, Scenarios: scenarios(t), Modes: []eval.Mode{eval.ModeScrollback}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Runs {
		if !r.Correct {
			t.Errorf("%s: wrong (%s); answer %q", r.Scenario, r.Why, r.Answer)
		}
		if r.InputTokens == 0 || r.OutputTokens == 0 {
			t.Errorf("%s: tokens %d/%d not counted", r.Scenario, r.InputTokens, r.OutputTokens)
		}
	}
}

func pick(t testing.TB, names ...string) []*eval.Scenario {
	t.Helper()
	scs, err := eval.Select(scenarios(t), names)
	if err != nil {
		t.Fatal(err)
	}
	return scs
}

// A model that sends arguments that are not JSON gets a tool error it can
// read, and the run goes on.
func TestMalformedArguments(t *testing.T) {
	for name, m := range models(t, evaltest.Sloppy{}) {
		t.Run(name, func(t *testing.T) {
			rep, err := eval.Run(context.Background(), eval.Config{Model: m, Scenarios: pick(t, "paginated-source"), Modes: []eval.Mode{eval.ModeScrollback}})
			if err != nil {
				t.Fatal(err)
			}
			r := rep.Runs[0]
			if !r.Correct {
				t.Errorf("wrong (%s): %q", r.Why, r.Answer)
			}
			var saw bool
			for _, msg := range r.Transcript {
				if msg.Role == "tool" && msg.IsError && strings.Contains(msg.Text, "not a JSON object") {
					saw = true
				}
			}
			if !saw {
				t.Errorf("the malformed arguments did not come back as a tool error: %+v", r.Transcript[:3])
			}
		})
	}
}

// A model that never answers is stopped at the turn limit, and the run
// counts as failed.
func TestTurnLimit(t *testing.T) {
	m := models(t, evaltest.Stubborn{})["openai"]
	rep, err := eval.Run(context.Background(), eval.Config{Model: m, Scenarios: pick(t, "head-pipeline"),
		Modes: []eval.Mode{eval.ModeScrollback}, Limits: eval.Limits{Turns: 5}})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Runs[0]
	if r.Correct || r.GaveUp != "turn limit" || r.Turns != 5 || r.Why != "gave up (turn limit)" {
		t.Errorf("run %+v, want a failed run that gave up at 5 turns", r)
	}
}

// A broken endpoint ends the evaluation with an error that names it, and
// no report.
func TestEndpointFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	for _, tc := range []struct {
		name, want string
		status     int
	}{
		{"unauthorized", "401", http.StatusUnauthorized},
		{"server error", "500", http.StatusInternalServerError},
		{"down", "cannot be reached", 0},
	} {
		for _, provider := range []string{"openai", "anthropic"} {
			t.Run(tc.name+"/"+provider, func(t *testing.T) {
				s, url := serve(t, evaltest.Diligent{})
				if tc.status != 0 {
					s.Fail(tc.status, `{"error":{"message":"scripted failure","type":"invalid_request_error"}}`)
				} else {
					url = down
				}
				var m eval.Model = eval.NewOpenAI(url, "k", "m")
				if provider == "anthropic" {
					m = eval.NewAnthropic(url, "k", "m")
				}
				rep, err := eval.Run(context.Background(), eval.Config{Model: m, Scenarios: pick(t, "foreign-id")})
				if rep != nil || !eval.IsEndpointError(err) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("report %v, error %v; want no report and an endpoint error saying %q", rep, err, tc.want)
				}
				if strings.Count(err.Error(), "\n") > 0 {
					t.Errorf("error spans lines: %q", err)
				}
			})
		}
	}
}

// The report sums the runs: per scenario and mode, then totals; --out keeps
// each transcript; the Markdown, JSON and HTML say the same.
func TestReport(t *testing.T) {
	m := models(t, evaltest.Diligent{})["openai"]
	out := t.TempDir()
	var progress bytes.Buffer
	rep, err := eval.Run(context.Background(), eval.Config{Model: m, Scenarios: pick(t, "paginated-source", "foreign-id"),
		Runs: 2, Progress: &progress, OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 8 || len(rep.Rows) != 4 || len(rep.Totals) != 2 {
		t.Fatalf("%d runs, %d rows, %d totals; want 8, 4, 2", len(rep.Runs), len(rep.Rows), len(rep.Totals))
	}
	// paginated-source: 2 calls (pages 1 and 2, where the item is), right in
	// both modes; foreign-id: right through scrollback only.
	want := map[string][2]int{"paginated-source/scrollback": {2, 2}, "paginated-source/truncate": {2, 2},
		"foreign-id/scrollback": {2, 1}, "foreign-id/truncate": {0, 1}}
	for _, r := range rep.Rows {
		w := want[r.Scenario+"/"+string(r.Mode)]
		if r.N != 2 || r.Correct != w[0] || r.MeanCalls != float64(w[1]) {
			t.Errorf("row %+v, want 2 runs, %d correct, %d calls each", r, w[0], w[1])
		}
	}
	if tot := rep.Totals[0]; tot.Mode != eval.ModeScrollback || tot.N != 4 || tot.Correct != 4 || tot.MeanCalls != 1.5 {
		t.Errorf("scrollback total %+v", tot)
	}
	if lines := strings.Count(progress.String(), "\n"); lines != 8 {
		t.Errorf("%d progress lines, want 8:\n%s", lines, progress.String())
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.jsonl"))
	if len(files) != 8 {
		t.Errorf("%d transcripts in --out, want 8", len(files))
	}
	data, err := os.ReadFile(filepath.Join(out, "paginated-source-scrollback-1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var last struct{ Result eval.RunResult }
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || !last.Result.Correct || len(lines) != 1+2*2+1+1 {
		t.Errorf("transcript of %d lines, last %s", len(lines), lines[len(lines)-1])
	}

	var md bytes.Buffer
	rep.WriteMarkdown(&md)
	for _, s := range []string{"| paginated-source | scrollback | 2/2 | 2.0 | 0 |", "| foreign-id | truncate | 0/2 |", "| **total** | scrollback | 4/4 |"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("markdown lacks %q:\n%s", s, md.String())
		}
	}
	var page bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"<svg", eval.ColorScrollback, eval.ColorTruncate, "<details>", "foreign-id · truncate · run 2"} {
		if !strings.Contains(page.String(), s) {
			t.Errorf("page lacks %q", s)
		}
	}
	for _, s := range []string{`src="http`, `href="http`, "@import", "<script src", "<link"} {
		if strings.Contains(page.String(), s) {
			t.Errorf("the page loads something from the network: %q", s)
		}
	}
}

func TestCheckers(t *testing.T) {
	for _, tc := range []struct {
		checker string
		answer  string
		want    bool
	}{
		{`{"number":"48213.55"}`, "The total_amount is 48,213.55 EUR.", true},
		{`{"number":"48213.55"}`, "It is 48213.5", false},
		{`{"number":"137"}`, "There are 137 lines.", true},
		{`{"number":"137"}`, "About 1370.", false},
		{`{"exact":"B-17-04"}`, "The bin is **B-17-04**.", true},
		{`{"exact":"B-17-04"}`, "The bin is B-17-040.", false},
		{`{"exact":"星🌟月-七三九"}`, "コードは「星🌟月-七三九」です", true},
		{`{"regex":"uncertain|cannot tell","not":"does not exist"}`, "I cannot tell from the first 500 lines.", true},
		{`{"regex":"uncertain|cannot tell","not":"does not exist"}`, "It does not exist; I cannot tell more.", false},
		{`{"regex":"absent"}`, "ABSENT", true},
	} {
		sc, err := eval.ParseScenario([]byte(`{"name":"x","title":"t","question":"q","answer":` + tc.checker + `,"policy":{"start":[{"tool":"a","args":{}}],"find":"x"}}`))
		if err != nil {
			t.Fatal(err)
		}
		if got, why := sc.Answer.Check(tc.answer); got != tc.want {
			t.Errorf("%s on %q = %v (%s), want %v", tc.checker, tc.answer, got, why, tc.want)
		}
	}
}

func TestBadScenarios(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{`{"name":"Bad Name","title":"t","question":"q","answer":{"exact":"a"},"policy":{"start":[{"tool":"a"}],"find":"x"}}`, "lower-case"},
		{`{"name":"x","title":"t","question":"q","answer":{"exact":"a","number":"1"},"policy":{"start":[{"tool":"a"}],"find":"x"}}`, "exactly one"},
		{`{"name":"x","title":"t","question":"q","answer":{"regex":"("},"policy":{"start":[{"tool":"a"}],"find":"x"}}`, "regex"},
		{`{"name":"x","title":"t","question":"q","answer":{"exact":"a"},"setup":{"files":[{"path":"f","gen":"nope"}]},"policy":{"start":[{"tool":"a"}],"find":"x"}}`, `no generator "nope"`},
		{`{"name":"x","title":"t","question":"q","answer":{"exact":"a"},"setup":{"files":[{"path":"../f","gen":"lines"}]},"policy":{"start":[{"tool":"a"}],"find":"x"}}`, "inside the working directory"},
		{`{"name":"x","title":"t","question":"q","answer":{"exact":"a"},"source":["s"],"policy":{"start":[{"tool":"a"}],"find":"x"}}`, "neither a script"},
		{`{"name":"x","title":"t","question":"q","answer":{"exact":"a"},"typo":1,"policy":{"start":[{"tool":"a"}],"find":"x"}}`, "unknown field"},
	} {
		if _, err := eval.ParseScenario([]byte(tc.file)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseScenario(%s) = %v, want an error saying %q", tc.file, err, tc.want)
		}
	}
	if _, err := eval.Select(scenarios(t), []string{"nope"}); err == nil || !strings.Contains(err.Error(), "trailing-field") {
		t.Errorf("Select of an unknown name: %v", err)
	}
}
