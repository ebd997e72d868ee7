package main

import (
	"bytes"
	"flag"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
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
	px, err := startProxy(ironic.URL)
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
	if again := px.k.take(); again.Total() != 0 {
		t.Fatalf("take did not reset: %+v", again)
	}
	http.DefaultClient.CloseIdleConnections()
}

func sampleReport() *Report {
	run := func(wall time.Duration, reads, writes, locked int) Run {
		return Run{Wall: wall, Calls: Calls{Reads: reads, Writes: writes, Locked: locked, ByRoute: map[string]int{"GET /v1/nodes/{id}": reads, "POST /v1/ports": writes}}}
	}
	r := &Report{Nodes: 2, Rounds: 3, Ironic: "http://127.0.0.1:6385", Sides: []SideResult{
		{Side: SideLoop, Label: "limit: loop, poll 20ms", Poll: 20 * time.Millisecond, Runs: []Run{run(4*time.Second, 200, 16, 2), run(2*time.Second, 100, 16, 0), run(3*time.Second, 150, 16, 0)}},
		{Side: SideLoop, Label: "loop, poll 100ms", Poll: 100 * time.Millisecond, Runs: []Run{run(2500*time.Millisecond, 40, 16, 0), run(2500*time.Millisecond, 40, 16, 0), run(2500*time.Millisecond, 40, 16, 0)}},
		{Side: SideHostforge, Label: "hostforge, poll 250ms+", Poll: 250 * time.Millisecond, Runs: []Run{run(3300*time.Millisecond, 18, 16, 0), run(3300*time.Millisecond, 18, 16, 0), run(3600*time.Millisecond, 18, 16, 0)}},
		{Side: SideSDK, Label: "openstacksdk, wait_for 2s", Poll: 2 * time.Second, Runs: []Run{run(9*time.Second, 14, 16, 0), run(8*time.Second, 14, 16, 0), run(10*time.Second, 14, 16, 0)}},
	}}
	r.judge()
	return r
}

func TestVerdict(t *testing.T) {
	r := sampleReport()
	v := r.Verdict
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if v == nil || !near(v.WallVsLimit, 1.1) || !near(v.WallVsBestLoop, 3.3/2.5) || !near(v.ReadsVsLimit, 18.0/150) || !near(v.WallVsSDK, 3.3/9) || !v.Met {
		t.Fatalf("verdict %+v", v)
	}
	r.Sides[2].Runs[1].Wall = 4 * time.Second // median 3.6 s: 1.2x, still within 1.25x
	r.judge()
	if !r.Verdict.Met {
		t.Fatalf("1.2x the limit missed: %+v", r.Verdict)
	}
	r.Sides[2].Runs[0].Wall = 4 * time.Second // median 4 s: 1.33x
	r.judge()
	if r.Verdict.Met {
		t.Fatalf("1.33x the limit met: %+v", r.Verdict)
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
		args []string
		bad  string
	}{
		{[]string{"-ironic", "http://127.0.0.1:6385"}, ""},
		{[]string{}, "-ironic is required"},
		{[]string{"-ironic", "x", "-nodes", "0"}, "at least 1"},
		{[]string{"-ironic", "x", "-sides", "loop,nova"}, `unknown side "nova"`},
		{[]string{"-ironic", "x", "-loop-polls", "20ms,fast"}, `"fast" is not a positive duration`},
		{[]string{"-ironic", "x", "-o", "yaml"}, "want text or json"},
	} {
		t.Setenv("HOSTFORGE_IRONIC_URL", "")
		o, err := parse(tt.args, io.Discard)
		if tt.bad == "" {
			if err != nil || len(o.sides) != 3 || len(o.loopPolls) != 3 || o.loopPolls[0] != 20*time.Millisecond || o.nodes != 20 {
				t.Fatalf("%v: %+v, %v", tt.args, o, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.bad) {
			t.Fatalf("%v: error %v, want %q", tt.args, err, tt.bad)
		}
	}
}
