package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge/ironic"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRoute(t *testing.T) {
	for in, want := range map[string]string{
		"/v1/nodes/8ba69e22-ce88-480c-813f-e68dfb93279a/states/power": "/v1/nodes/{id}/states/power",
		"/v1/nodes/bench-loop-r0-03":                                  "/v1/nodes/{id}",
		"/v1/nodes":                                                   "/v1/nodes",
		"/v1/ports/detail":                                            "/v1/ports/detail",
		"/v1/ports":                                                   "/v1/ports",
		"/v1/nodes/x/traits":                                          "/v1/nodes/{id}/traits",
		"/":                                                           "/",
	} {
		if got := route(in); got != want {
			t.Errorf("route(%q) = %q, want %q", in, got, want)
		}
	}
}

// The proxy forwards every call to Ironic, counts it by method, route and
// status, and keeps version documents pointing at itself.
func TestProxyCounts(t *testing.T) {
	var ironic *httptest.Server
	ironic = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/":
			io.WriteString(w, `{"versions":[{"links":[{"href":"`+ironic.URL+`/v1/"}]}]}`)
		case r.Method == http.MethodPut:
			w.WriteHeader(http.StatusConflict)
		default:
			io.WriteString(w, `{}`)
		}
	}))
	defer ironic.Close()
	px, err := startProxy(ironic.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	do := func(method, path string) string {
		req, _ := http.NewRequest(method, px.URL+path, strings.NewReader("{}"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	root := do(http.MethodGet, "/")
	if !strings.Contains(root, px.URL+"/v1/") || strings.Contains(root, ironic.URL) {
		t.Fatalf("version document %s still points at Ironic", root)
	}
	do(http.MethodGet, "/v1/nodes/a")
	do(http.MethodGet, "/v1/nodes/b")
	do(http.MethodPut, "/v1/nodes/a/states/power")
	do(http.MethodPost, "/v1/ports")
	c := px.k.take()
	if c.Reads != 3 || c.Writes != 2 || c.Locked != 1 || c.ByRoute["GET /v1/nodes/{id}"] != 2 || c.ByRoute["PUT /v1/nodes/{id}/states/power"] != 1 {
		t.Fatalf("counted %+v", c)
	}
	// The bytes of the GETs' answers as Ironic sent them: the version
	// document and two "{}".
	if want := int64(len(`{"versions":[{"links":[{"href":"`+ironic.URL+`/v1/"}]}]}`) + 4); c.ReadBytes != want {
		t.Fatalf("read bytes %d, want %d", c.ReadBytes, want)
	}
	if again := px.k.take(); again.Total() != 0 {
		t.Fatalf("take did not reset: %+v", again)
	}
	http.DefaultClient.CloseIdleConnections()
}

// With a trace, the proxy writes every call as a JSON line: timed from
// the side's start, the node its path names, and the states a node read
// or creation answered — the body reaching the client unchanged.
func TestProxyTrace(t *testing.T) {
	node := `{"uuid":"u-1","name":"n1","provision_state":"verifying","target_provision_state":"manageable","power_state":null}`
	ironic := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		io.WriteString(w, node)
	}))
	defer ironic.Close()
	var buf bytes.Buffer
	tr := newTracer(&buf)
	px, err := startProxy(ironic.URL, tr)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	tr.begin("hostforge", 2)
	for _, c := range []struct{ method, path string }{{http.MethodPost, "/v1/nodes"}, {http.MethodGet, "/v1/nodes/n1"}, {http.MethodPut, "/v1/nodes/u-1/states/power"}} {
		req, _ := http.NewRequest(c.method, px.URL+c.path, strings.NewReader("{}"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != node {
			t.Fatalf("%s %s: the client got %q", c.method, c.path, b)
		}
	}
	if err := tr.flush(); err != nil {
		t.Fatal(err)
	}
	var got []TraceEvent
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var e TraceEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if e.Side != "hostforge" || e.Round != 2 || e.At < 0 || e.Took < 0 || e.Time.IsZero() {
			t.Errorf("event %+v: side, round or times missing", e)
		}
		e.Side, e.Round, e.At, e.Took, e.Time = "", 0, 0, 0, time.Time{}
		got = append(got, e)
	}
	want := []TraceEvent{
		{Method: "POST", Route: "/v1/nodes", Status: 201, UUID: "u-1", Name: "n1", ProvisionState: "verifying", TargetProvisionState: "manageable"},
		{Method: "GET", Route: "/v1/nodes/{id}", Ident: "n1", Status: 200, UUID: "u-1", Name: "n1", ProvisionState: "verifying", TargetProvisionState: "manageable"},
		{Method: "PUT", Route: "/v1/nodes/{id}/states/power", Ident: "u-1", Status: 200},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("trace\n%+v\nwant\n%+v", got, want)
	}
	http.DefaultClient.CloseIdleConnections()
}

func sampleReport() *Report {
	run := func(wall time.Duration, reads, writes, locked int) Run {
		return Run{Wall: wall, Calls: Calls{Reads: reads, Writes: writes, Locked: locked, ReadBytes: int64(reads) * 600,
			ByRoute: map[string]int{"GET /v1/nodes/{id}": reads, "POST /v1/ports": writes}}}
	}
	r := &Report{Nodes: 2, Rounds: 3, Ironic: "http://127.0.0.1:6385", FakeDelays: "power 3 s, bios 2-5 s", TimingScale: 0.1, Sides: []SideResult{
		{Side: SideLoop, Label: "limit: loop, poll 20ms", Poll: 20 * time.Millisecond, Runs: []Run{run(4*time.Second, 200, 16, 2), run(2*time.Second, 100, 16, 0), run(3*time.Second, 150, 16, 0)}},
		{Side: SideLoop, Label: "loop, poll 100ms", Poll: 100 * time.Millisecond, Runs: []Run{run(2500*time.Millisecond, 40, 16, 0), run(2500*time.Millisecond, 40, 16, 0), run(2500*time.Millisecond, 40, 16, 0)}},
		{Side: SideHostforge, Label: "hostforge, polls from 1s, capped", Poll: 250 * time.Millisecond, Runs: []Run{run(3*time.Second, 18, 16, 0), run(3*time.Second, 18, 16, 0), run(3100*time.Millisecond, 18, 16, 0)}},
		{Side: SideSDK, Label: "openstacksdk, wait_for 2s", Poll: 2 * time.Second, Runs: []Run{run(9*time.Second, 20, 16, 0), run(8*time.Second, 20, 16, 0), run(10*time.Second, 20, 16, 0)}},
	}}
	r.judge()
	return r
}

func TestVerdict(t *testing.T) {
	r := sampleReport()
	v := r.Verdict
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if v == nil || !near(v.WallVsLimit, 1.0) || !near(v.WallVsBestLoop, 3.0/2.5) || !near(v.ReadsVsLimit, 18.0/150) ||
		!near(v.WallVsSDK, 3.0/9) || !near(v.ReadsVsSDK, 18.0/20) || !v.WallMet || !v.ReadsMet || !v.SDKMet || !v.SDKReadsMet || !v.Met {
		t.Fatalf("verdict %+v", v)
	}
	hf, sdk := &r.Sides[2], &r.Sides[3]
	hf.Runs[1].Wall = 3150 * time.Millisecond // median 3.1 s: 1.03x, within 1.05x
	r.judge()
	if !r.Verdict.Met {
		t.Fatalf("1.03x the limit missed: %+v", r.Verdict)
	}
	hf.Runs[0].Wall = 3200 * time.Millisecond // median 3.15 s: 1.05x
	r.judge()
	if !r.Verdict.WallMet {
		t.Fatalf("1.05x the limit missed: %+v", r.Verdict)
	}
	hf.Runs[0].Wall, hf.Runs[1].Wall = 3300*time.Millisecond, 3300*time.Millisecond // median 3.3 s: 1.1x
	r.judge()
	if r.Verdict.Met || r.Verdict.WallMet || !r.Verdict.ReadsMet {
		t.Fatalf("1.1x the limit met: %+v", r.Verdict)
	}
	hf.Runs[0].Wall, hf.Runs[1].Wall = 3*time.Second, 3*time.Second
	for i := range hf.Runs {
		hf.Runs[i].Calls.Reads = 31 // 31/150: 20.7 % of the limit's reads, more than openstacksdk's 20
	}
	r.judge()
	if r.Verdict.Met || !r.Verdict.WallMet || r.Verdict.ReadsMet || r.Verdict.SDKReadsMet {
		t.Fatalf("20.7%% of the limit's reads met: %+v", r.Verdict)
	}
	for i := range hf.Runs {
		hf.Runs[i].Calls.Reads = 20 // as many as openstacksdk: met
	}
	r.judge()
	if !r.Verdict.SDKReadsMet || !r.Verdict.Met {
		t.Fatalf("openstacksdk's reads per node missed: %+v", r.Verdict)
	}
	sdk.Runs = []Run{{Wall: 3 * time.Second, Calls: Calls{Reads: 20}}} // as fast: met
	r.judge()
	if !r.Verdict.SDKMet {
		t.Fatalf("openstacksdk's wall time missed at 1.0x: %+v", r.Verdict)
	}
	sdk.Runs = []Run{{Wall: 2900 * time.Millisecond, Calls: Calls{Reads: 20}}} // openstacksdk faster
	r.judge()
	if r.Verdict.Met || !r.Verdict.WallMet || !r.Verdict.ReadsMet || r.Verdict.SDKMet {
		t.Fatalf("slower than openstacksdk met: %+v", r.Verdict)
	}
	alone := &Report{Nodes: 2, Sides: []SideResult{r.Sides[2]}}
	alone.judge()
	if alone.Verdict != nil {
		t.Fatalf("a verdict without the limit: %+v", alone.Verdict)
	}
}

func TestReportGolden(t *testing.T) {
	var b bytes.Buffer
	if err := sampleReport().WriteText(&b, true); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "report.golden")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update once)", err)
	}
	if b.String() != string(want) {
		t.Fatalf("report differs from %s:\n%s", golden, b.String())
	}
}

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		name  string
		args  []string
		bad   string
		check func(options) bool
	}{
		{name: "defaults", args: []string{"-ironic", "http://127.0.0.1:6385"}, check: func(o options) bool {
			return len(o.sides) == 3 && o.nodes == 20 && o.delays == nil && o.timingScale == 1.0/40 &&
				slices.Equal(o.loopPolls, []time.Duration{20 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond})
		}},
		{name: "delays", args: []string{"-ironic", "x", "-delays"}, check: func(o options) bool {
			return len(o.delays) == len(fakeDelayOptions) && o.delays[0] == (fakeDelay{"power", 3, 3}) && o.timingScale == 1.0/10 &&
				slices.Equal(o.loopPolls, []time.Duration{20 * time.Millisecond, 250 * time.Millisecond, time.Second})
		}},
		{name: "own delays imply -delays", args: []string{"-ironic", "x", "-fake-delays", "bios=2-5,power_delay=1", "-timing-scale", "0.05"}, check: func(o options) bool {
			return slices.Equal(o.delays, []fakeDelay{{"power", 1, 1}, {"bios", 2, 5}}) && o.timingScale == 0.05
		}},
		{name: "ironic-conf needs no Ironic", args: []string{"-ironic-conf", "-delays"}, check: func(o options) bool { return o.ironicConf && len(o.delays) == 10 }},
		{name: "no Ironic", args: []string{}, bad: "-ironic is required"},
		{name: "no nodes", args: []string{"-ironic", "x", "-nodes", "0"}, bad: "at least 1"},
		{name: "unknown side", args: []string{"-ironic", "x", "-sides", "loop,nova"}, bad: `unknown side "nova"`},
		{name: "bad poll", args: []string{"-ironic", "x", "-loop-polls", "20ms,fast"}, bad: `"fast" is not a positive duration`},
		{name: "bad output", args: []string{"-ironic", "x", "-o", "yaml"}, bad: "want text or json"},
		{name: "negative scale", args: []string{"-ironic", "x", "-timing-scale", "-1"}, bad: "want a positive factor"},
		{name: "unknown delay", args: []string{"-ironic-conf", "-fake-delays", "firmware=3"}, bad: `"firmware=3": want OPTION=SECONDS`},
		{name: "fractional delay", args: []string{"-ironic-conf", "-fake-delays", "power=1.5"}, bad: "seconds must be whole"},
		{name: "reversed range", args: []string{"-ironic-conf", "-fake-delays", "power=5-2"}, bad: "A <= B"},
		{name: "twice", args: []string{"-ironic-conf", "-fake-delays", "power=1,power=2"}, bad: "power given twice"},
		{name: "empty delays", args: []string{"-ironic-conf", "-fake-delays", ","}, bad: "no delay given"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HOSTFORGE_IRONIC_URL", "")
			o, err := parse(tt.args, io.Discard)
			if tt.bad == "" {
				if err != nil || !tt.check(o) {
					t.Fatalf("%v: %+v, %v", tt.args, o, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.bad) {
				t.Fatalf("%v: error %v, want %q", tt.args, err, tt.bad)
			}
		})
	}
}

// The INI the script appends to ironic.conf: Ironic 2023.1's option names,
// whole seconds, "A,B" for a triangular range.
func TestIronicConf(t *testing.T) {
	if got := ironicConf(nil); got != "" {
		t.Fatalf("no delays: %q", got)
	}
	d, err := parseFakeDelays("rescue=1, bios=2-5,power=3")
	if err != nil {
		t.Fatal(err)
	}
	want := "[fake]\npower_delay = 3\nbios_delay = 2,5\nrescue_delay = 1\n"
	if got := ironicConf(d); got != want {
		t.Fatalf("ironicConf = %q, want %q", got, want)
	}
	if got := describeDelays(d); got != "power 3 s, bios 2-5 s, rescue 1 s" {
		t.Fatalf("describeDelays = %q", got)
	}
	all, err := parseFakeDelays(defaultFakeDelays)
	if err != nil || len(all) != len(fakeDelayOptions) {
		t.Fatalf("default delays: %v %v", all, err)
	}
}

// hostforge runs its production timing scaled: every duration but
// FreshLook (a round trip's age, and the round trips are real), none left at
// its production value.
func TestScaledTiming(t *testing.T) {
	got, prod := scaledTiming(0.1), ironic.DefaultTiming()
	if got.StatePoll != prod.StatePoll/10 || got.StatePollMax != prod.StatePollMax/10 || got.CleanPollMin != prod.CleanPollMin/10 ||
		got.CleanPollMax != prod.CleanPollMax/10 || got.PowerOnTimeout != prod.PowerOnTimeout/10 || got.InspectionPoll != prod.InspectionPoll/10 {
		t.Fatalf("scaled timing %+v", got)
	}
	if got.FreshLook != prod.FreshLook {
		t.Errorf("FreshLook scaled to %v, want the production %v", got.FreshLook, prod.FreshLook)
	}
	g, p := reflect.ValueOf(got), reflect.ValueOf(prod)
	for i := 0; i < g.NumField(); i++ {
		if g.Type().Field(i).Name == "FreshLook" {
			continue
		}
		if g.Field(i).Type() == reflect.TypeFor[time.Duration]() && (g.Field(i).Int() == p.Field(i).Int() || g.Field(i).Int() <= 0) {
			t.Errorf("%s not scaled: %v", g.Type().Field(i).Name, g.Field(i))
		}
	}
}
