package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
	if len(all) < 30 {
		t.Errorf("%d scenarios, want at least 30", len(all))
	}
	sealed, chat := 0, 0
	for _, sc := range all {
		if sc.About == "" {
			t.Errorf("%s: every scenario says what it is about", sc.Name)
		}
		// The checker accepts the true value, as a model would phrase it.
		if truth := sc.Answer.Exact + sc.Answer.Number; truth != "" {
			if ok, why := sc.Answer.Check("The answer is " + truth + "."); !ok {
				t.Errorf("%s: the checker refuses the true value %s: %s", sc.Name, truth, why)
			}
		}
		if !slices.ContainsFunc(sc.Policy.Start, func(c eval.Call) bool { return c.Tool != "read_file" && c.Tool != "read_tool_output" }) {
			t.Errorf("%s: every scenario runs a source: a command, a script or an upstream tool", sc.Name)
		}
		if sc.Sealed {
			sealed++
			if !sc.PastCut || !sc.LostIn(eval.ModeTruncate) {
				t.Errorf("%s: a sealed scenario's evidence lies past the cut and is lost to truncate", sc.Name)
			}
		}
		if sc.Client == eval.ClientChat {
			chat++
			if !sc.Sealed || sc.PastCut && !sc.LostIn(eval.ModeSpill) {
				t.Errorf("%s: a chat client has no shell: its sources are sealed, and spill shows it what truncate does", sc.Name)
			}
		}
	}
	if sealed < 14 || chat < 8 {
		t.Errorf("%d sealed and %d chat scenarios, want at least 14 and 8", sealed, chat)
	}
}

// run runs every scenario once in mode with policy p and returns the runs.
func runPolicy(t *testing.T, p evaltest.Policy, mode eval.Mode, scs []*eval.Scenario) []eval.RunResult {
	t.Helper()
	m := models(t, p)["openai"]
	rep, err := eval.Run(context.Background(), eval.Config{Model: m, Scenarios: scs, Modes: []eval.Mode{mode}})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Runs
}

// The scripted policies against the whole suite, in every mode, prove that
// the checkers and the scoring can tell the modes and the policies apart:
//
//   - diligent passes every scenario through scrollback: correct, or
//     uncertain where the evidence is lost even there; in the baselines it
//     is correct where the evidence is not past the cut (truncate) or was
//     saved to a file (spill, for an agent), and otherwise uncertain where
//     the evidence is lost and wrong where it was there to be found;
//   - lazy, which answers from the first screen, is correct only where a
//     retained result's footer names the evidence (an error-like line);
//   - tee, the careful shell agent, passes every file-backed scenario in
//     truncate mode and no sealed one;
//   - twice, which runs each source twice, is wrong with a re-run counted
//     in every scenario.
func TestPoliciesAgainstTheSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole suite eight times")
	}
	all := scenarios(t)
	byName := map[string]*eval.Scenario{}
	for _, sc := range all {
		byName[sc.Name] = sc
	}
	// Spill saves results to files, which diligent greps; what was never a
	// result it cannot save.
	spillMisses := map[string]string{
		"json-byte-offset": "the evidence is in a file, one line of 2 MB, past the baseline read_file's 2,000-character line cut",
		"code-slice":       "there is no run_code outside scrollback, and diligent does not work around it",
		"code-second-id":   "there is no run_code outside scrollback, and diligent does not work around it",
	}
	// A retained result's footer lists the first error-like lines it does
	// not show, with their offsets: where the evidence is such a line, even
	// the lazy policy, which answers from what it was first shown, has it.
	footerNames := map[string]bool{
		"build-first-error":    true,
		"ci-build-first-error": true,
		"ci-job-log":           true,
		"container-logs":       true,
	}
	diligent := func(mode eval.Mode) func(*eval.Scenario) eval.Outcome {
		return func(sc *eval.Scenario) eval.Outcome {
			spilled := sc.Client == eval.ClientAgent && spillMisses[sc.Name] == ""
			seen := mode == eval.ModeScrollback || !sc.PastCut || mode == eval.ModeSpill && spilled
			switch {
			case sc.LostIn(mode):
				return eval.Uncertain
			case seen:
				return eval.Correct
			}
			return eval.Wrong
		}
	}
	for _, tc := range []struct {
		policy string
		mode   eval.Mode
		want   func(*eval.Scenario) eval.Outcome // "" = anything but correct
	}{
		{"diligent", eval.ModeScrollback, diligent(eval.ModeScrollback)},
		{"diligent", eval.ModeSpill, diligent(eval.ModeSpill)},
		{"diligent", eval.ModeTruncate, diligent(eval.ModeTruncate)},
		{"lazy", eval.ModeScrollback, func(sc *eval.Scenario) eval.Outcome {
			if footerNames[sc.Name] {
				return eval.Correct
			}
			return eval.Wrong
		}},
		{"lazy", eval.ModeSpill, func(*eval.Scenario) eval.Outcome { return eval.Wrong }},
		{"lazy", eval.ModeTruncate, func(*eval.Scenario) eval.Outcome { return eval.Wrong }},
		{"tee", eval.ModeTruncate, func(sc *eval.Scenario) eval.Outcome {
			if sc.Sealed {
				return ""
			}
			return eval.Correct
		}},
		{"twice", eval.ModeScrollback, func(*eval.Scenario) eval.Outcome { return eval.Wrong }},
	} {
		t.Run(tc.policy+"/"+string(tc.mode), func(t *testing.T) {
			for _, r := range runPolicy(t, evaltest.Policies[tc.policy], tc.mode, all) {
				sc := byName[r.Scenario]
				want := tc.want(sc)
				switch {
				case want == "" && r.Outcome == eval.Correct:
					t.Errorf("%s: correct (%q), but this policy cannot have the evidence in this mode", r.Scenario, r.Answer)
				case want != "" && r.Outcome != want:
					t.Errorf("%s: %s (%s), want %s; answer %q", r.Scenario, r.Outcome, r.Why, want, r.Answer)
				}
				if tc.policy == "twice" {
					if r.ReRuns < 1 || !strings.Contains(r.Why, "re-ran") {
						t.Errorf("%s: %d re-runs (%s), want a re-run counted and the run wrong for it", r.Scenario, r.ReRuns, r.Why)
					}
				} else if r.ReRuns != 0 {
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
		if r.Outcome == eval.Wrong {
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
			if !r.Correct() {
				t.Errorf("%s (%s): %q", r.Outcome, r.Why, r.Answer)
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
	if r.Outcome != eval.Wrong || r.GaveUp != "turn limit" || r.Turns != 5 || r.Why != "gave up (turn limit)" {
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

// The report sums the runs: per scenario and mode, then totals with 95%
// intervals over the passes; --out keeps each transcript; the Markdown,
// JSON and HTML say the same, the modes side by side.
func TestReport(t *testing.T) {
	m := models(t, evaltest.Diligent{})["openai"]
	out := t.TempDir()
	var progress bytes.Buffer
	rep, err := eval.Run(context.Background(), eval.Config{Model: m, Scenarios: pick(t, "paginated-source", "head-pipeline", "proxied-json"),
		Runs: 2, Progress: &progress, OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 18 || len(rep.Rows) != 9 || len(rep.Totals) != 3 {
		t.Fatalf("%d runs, %d rows, %d totals; want 18, 9, 3", len(rep.Runs), len(rep.Rows), len(rep.Totals))
	}
	// paginated-source: pages 1 and 2 (where the item is), whole in every
	// mode; head-pipeline: the stream was cut before anyone saw it, so
	// "cannot tell" is the honest answer in every mode; proxied-json: a chat
	// client finds it only through scrollback.
	type want struct{ correct, uncertain, calls int }
	wants := map[string]want{
		"paginated-source/scrollback": {2, 0, 2}, "paginated-source/spill": {2, 0, 2}, "paginated-source/truncate": {2, 0, 2},
		"head-pipeline/scrollback": {0, 2, 1}, "head-pipeline/spill": {0, 2, 1}, "head-pipeline/truncate": {0, 2, 1},
		"proxied-json/scrollback": {2, 0, 2}, "proxied-json/spill": {0, 2, 1}, "proxied-json/truncate": {0, 2, 1},
	}
	for _, r := range rep.Rows {
		w := wants[r.Scenario+"/"+string(r.Mode)]
		if r.N != 2 || r.Correct != w.correct || r.Uncertain != w.uncertain || r.Wrong != 0 || r.MeanCalls != float64(w.calls) || r.ReRuns != 0 {
			t.Errorf("row %s/%s: %d runs, %d correct, %d uncertain, %d wrong, %.1f calls, %d re-runs; want 2, %d, %d, 0, %d, 0",
				r.Scenario, r.Mode, r.N, r.Correct, r.Uncertain, r.Wrong, r.MeanCalls, r.ReRuns, w.correct, w.uncertain, w.calls)
		}
		switch {
		case r.Correct == 0 && r.InputTokensPerCorrect != nil:
			t.Errorf("row %s/%s: no correct run, yet input tokens per correct %v", r.Scenario, r.Mode, *r.InputTokensPerCorrect)
		case r.Correct > 0 && (r.InputTokensPerCorrect == nil || *r.InputTokensPerCorrect != float64(r.InputTokens)/float64(r.Correct)):
			t.Errorf("row %s/%s: input tokens per correct %v, want %d/%d", r.Scenario, r.Mode, r.InputTokensPerCorrect, r.InputTokens, r.Correct)
		}
	}
	tot := rep.Totals[0]
	if tot.Mode != eval.ModeScrollback || tot.N != 6 || tot.Correct != 4 || tot.Uncertain != 2 || tot.CorrectCI95 == nil || *tot.CorrectCI95 != [2]float64{2, 2} ||
		tot.InputTokensPerCorrect == nil || tot.InputTokensPerCorrectCI95 == nil {
		t.Errorf("scrollback total %+v", tot)
	}
	if lines := strings.Count(progress.String(), "\n"); lines != 18 {
		t.Errorf("%d progress lines, want 18:\n%s", lines, progress.String())
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.jsonl"))
	if len(files) != 18 {
		t.Errorf("%d transcripts in --out, want 18", len(files))
	}
	data, err := os.ReadFile(filepath.Join(out, "paginated-source-scrollback-1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var last struct{ Result eval.RunResult }
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || !last.Result.Correct() || len(lines) != 1+2*2+1+1 {
		t.Errorf("transcript of %d lines, last %s", len(lines), lines[len(lines)-1])
	}

	// The JSON rows hold the contract's fields.
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var generic struct{ Rows, Totals []map[string]any }
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatal(err)
	}
	for _, row := range append(generic.Rows, generic.Totals...) {
		for _, k := range []string{"correct", "uncertain", "wrong", "reruns", "input_tokens", "output_tokens", "input_tokens_per_correct"} {
			if _, ok := row[k]; !ok {
				t.Errorf("a JSON row lacks %q: %v", k, row)
			}
		}
	}

	var md bytes.Buffer
	rep.WriteMarkdown(&md)
	for _, s := range []string{"| paginated-source | agent | scrollback | 2/2 | 0 | 0 | 0 | 2.0 |", "| head-pipeline | agent, sealed | truncate | 0/2 | 2 | 0 | 0 | 1.0 |",
		"| proxied-json | chat, sealed | spill | 0/2 | 2 | 0 |", "| **total** |  | scrollback | 4/6 | 2 | 0 | 0 |", "- scrollback: correct answers per pass 2.0–2.0"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("markdown lacks %q:\n%s", s, md.String())
		}
	}
	var page bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"<svg", eval.ColorScrollback, eval.ColorSpill, eval.ColorTruncate, "<details>", "proxied-json · truncate · run 2",
		"<th>scrollback</th><th>spill</th><th>truncate</th>", "tok/correct"} {
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

// The default shown size (scrollback.ShownBudget) was chosen as the
// smallest at which no footer of the suite says less than it does at
// 8 KiB (docs/eval.md): every preview the diligent policy reads keeps its
// JSON outline, its query_tool_output call and its error-like lines. A
// footer grown longer, or a smaller default, fails here.
func TestShownBudgetFootersSayAll(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite twice")
	}
	type said struct {
		outline, query bool
		errors         int
	}
	errLine := regexp.MustCompile(`\n  \d+:\d+: `)
	footers := func(preview int) (map[string]said, int64) {
		m := models(t, evaltest.Diligent{})["openai"]
		rep, err := eval.Run(context.Background(), eval.Config{Model: m, Scenarios: scenarios(t), Modes: []eval.Mode{eval.ModeScrollback}, PreviewBytes: preview})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]said{}
		var tokens int64
		for _, r := range rep.Runs {
			tokens += r.InputTokens
			k := 0
			for _, msg := range r.Transcript {
				if msg.Role != "tool" || !strings.Contains(msg.Text, " not shown, of ") {
					continue
				}
				out[fmt.Sprintf("%s#%d", r.Scenario, k)] = said{
					outline: strings.Contains(msg.Text, "Outline (offset where each value starts)"),
					query:   strings.Contains(msg.Text, "JSON: query it with"),
					errors:  len(errLine.FindAllString(msg.Text, -1)),
				}
				k++
			}
		}
		return out, tokens
	}
	small, smallTokens := footers(0)
	whole, wholeTokens := footers(8192)
	if len(whole) < 25 || len(small) != len(whole) {
		t.Fatalf("%d previews at the default and %d at 8 KiB, want the same, at least 25", len(small), len(whole))
	}
	for k, w := range whole {
		if small[k] != w {
			t.Errorf("%s: at the default shown size the footer says %+v, at 8 KiB %+v", k, small[k], w)
		}
	}
	if smallTokens >= wholeTokens {
		t.Errorf("the default shown size took %d input tokens, 8 KiB %d", smallTokens, wholeTokens)
	}
}
