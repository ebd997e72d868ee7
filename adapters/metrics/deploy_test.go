package metrics_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/metrics"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/flow"
)

// The files under deploy/ that name metrics.
var (
	dashboardFile  = filepath.Join("..", "..", "deploy", "grafana", "hostforge.json")
	alertsFile     = filepath.Join("..", "..", "deploy", "prometheus", "alerts.yml")
	alertTestsFile = filepath.Join("..", "..", "deploy", "prometheus", "alerts_test.yml")
)

// query is one PromQL expression and where it was found.
type query struct{ where, expr string }

// recording remembers every collector registered through it.
type recording struct {
	prometheus.Registerer
	collectors []prometheus.Collector
}

func (r *recording) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return r.Registerer.Register(c)
}

// exportedNames builds the registry a worker serves (NewRegistry and
// NewExporters, as prepareMetrics does), gives every family a series, and
// returns every name a query can select: a counter's or gauge's name, a
// histogram's _bucket, _sum and _count, a summary's name, _sum and _count.
// It fails when a registered family is left without a series, so no
// family can escape the comparison.
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	reg := metrics.NewRegistry()
	rec := &recording{Registerer: reg}
	ex, err := metrics.NewExporters(rec)
	if err != nil {
		t.Fatal(err)
	}
	f := &hostforge.Failure{Spec: *hostforge.Unclassified}
	for _, o := range []any{
		flow.StepAttempt{Step: "s", Outcome: hostforge.Failed, Failure: f},
		flow.Waited{Step: "s", Reason: "r", Sleep: time.Second},
		flow.WaitExhausted{Step: "s", Reason: "r"},
		flow.RunStarted{Workflow: "enrollment"},
		flow.RunEnded{Workflow: "enrollment", Failure: f},
		flow.PhaseEnded{Workflow: "enrollment", Phase: "p", Status: "done"},
		flow.ScheduleRun{Schedule: metrics.ScheduleFirmwarePass},
		extensions.DeliveryEnded{Stage: extensions.ServerRegisteredStage, TaskType: extensions.TaskWebhook, Status: extensions.StatusSucceeded},
	} {
		ex.Workflows.Observe(o)
	}
	ex.Workflows.DeclareSchedule(metrics.ScheduleFirmwarePass, time.Hour)
	ex.Firmware.Gauges(firmware.Gauges{})
	ex.Firmware.UpdateFailed(firmware.TargetHost, "X")
	ex.Firmware.ReprovisionRetry()

	descs := make(chan *prometheus.Desc, 64)
	go func() {
		for _, c := range rec.collectors {
			c.Describe(descs)
		}
		close(descs)
	}()
	registered := 0
	for range descs {
		registered++
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	gathered := 0
	for _, mf := range fams {
		n := mf.GetName()
		if strings.HasPrefix(n, metrics.Namespace+"_") {
			gathered++
		}
		switch mf.GetType().String() {
		case "HISTOGRAM":
			names[n+"_bucket"], names[n+"_sum"], names[n+"_count"] = true, true, true
		case "SUMMARY":
			names[n], names[n+"_sum"], names[n+"_count"] = true, true, true
		default:
			names[n] = true
		}
	}
	if gathered != registered {
		t.Fatalf("%d hostforge families registered, %d have a series here: give the new family a series in exportedNames", registered, gathered)
	}
	return names
}

// dashboardQueries are the dashboard's panel targets (rows' panels too)
// and its variables' queries.
func dashboardQueries(t *testing.T, b []byte) []query {
	t.Helper()
	var d struct {
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	var out []query
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				out = append(out, query{where: "panel " + p.Title, expr: tg.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		var q string
		var obj struct {
			Query string `json:"query"`
		}
		if json.Unmarshal(v.Query, &q) != nil && json.Unmarshal(v.Query, &obj) == nil {
			q = obj.Query
		}
		if q = variableExpr(q); q != "" {
			out = append(out, query{where: "variable " + v.Name, expr: q})
		}
	}
	return out
}

type panel struct {
	Title   string `json:"title"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

// variableExpr is the PromQL in a Grafana variable's query:
// label_values(SELECTOR, label), query_result(EXPR), or none.
func variableExpr(q string) string {
	q = strings.TrimSpace(q)
	switch {
	case strings.HasPrefix(q, "label_values(") && strings.HasSuffix(q, ")"):
		inner := q[len("label_values(") : len(q)-1]
		if i := strings.LastIndex(inner, ","); i >= 0 {
			return inner[:i]
		}
		return ""
	case strings.HasPrefix(q, "query_result(") && strings.HasSuffix(q, ")"):
		return q[len("query_result(") : len(q)-1]
	}
	return ""
}

// alertQueries are the rules' expressions.
func alertQueries(t *testing.T, b []byte) []query {
	t.Helper()
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert, Record, Expr string
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("alerts.yml: %v", err)
	}
	var out []query
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			out = append(out, query{where: "rule " + r.Alert + r.Record, expr: r.Expr})
		}
	}
	return out
}

// alertTestQueries are the unit tests' input series and expressions: a
// test that feeds a series under a name the worker does not export tests
// nothing.
func alertTestQueries(t *testing.T, b []byte) []query {
	t.Helper()
	var f struct {
		Tests []struct {
			InputSeries []struct {
				Series string `yaml:"series"`
			} `yaml:"input_series"`
			PromQL []struct {
				Expr string `yaml:"expr"`
			} `yaml:"promql_expr_test"`
		} `yaml:"tests"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("alerts_test.yml: %v", err)
	}
	var out []query
	for i, tc := range f.Tests {
		for _, s := range tc.InputSeries {
			out = append(out, query{where: fmt.Sprintf("test %d input series", i+1), expr: s.Series})
		}
		for _, p := range tc.PromQL {
			out = append(out, query{where: fmt.Sprintf("test %d expression", i+1), expr: p.Expr})
		}
	}
	return out
}

// problems lists each query naming no metric or a metric not exported.
func problems(exported map[string]bool, qs []query) []string {
	var out []string
	for _, q := range qs {
		names := metricNames(q.expr)
		if len(names) == 0 {
			out = append(out, fmt.Sprintf("%s: %q names no metric", q.where, q.expr))
		}
		for _, n := range names {
			if !exported[n] {
				out = append(out, fmt.Sprintf("%s: %s is not exported by a hostforge worker (%q)", q.where, n, q.expr))
			}
		}
	}
	return out
}

// TestDeployNamesOnlyExportedMetrics: every metric the Grafana dashboard,
// the alert rules and their unit tests name is one a worker exports.
func TestDeployNamesOnlyExportedMetrics(t *testing.T) {
	exported := exportedNames(t)
	var qs []query
	for _, f := range []struct {
		path  string
		parse func(*testing.T, []byte) []query
		min   int
	}{
		{dashboardFile, dashboardQueries, 30},
		{alertsFile, alertQueries, 6},
		{alertTestsFile, alertTestQueries, 20},
	} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		got := f.parse(t, b)
		if len(got) < f.min {
			t.Fatalf("%s: %d queries found, want at least %d", f.path, len(got), f.min)
		}
		qs = append(qs, got...)
	}
	for _, p := range problems(exported, qs) {
		t.Error(p)
	}
	// The dashboard shows each workflow's metrics, and every alert the
	// rules define reads a hostforge metric.
	used := map[string]bool{}
	for _, q := range qs {
		for _, n := range metricNames(q.expr) {
			used[n] = true
		}
	}
	for _, n := range []string{"hostforge_workflow_runs_finished_total", "hostforge_phase_duration_seconds", "hostforge_waits_total",
		"hostforge_exhausted_reprovision_retry_count", "hostforge_firmware_updates_total", "hostforge_extension_deliveries_total",
		"hostforge_extension_delivery_latency_seconds", "hostforge_schedule_last_run_timestamp_seconds", "hostforge_schedule_lag_seconds"} {
		if !used[n] && !used[n+"_bucket"] {
			t.Errorf("deploy/ does not use %s", n)
		}
	}
}

// TestUnexportedMetricFails: the check above fails a dashboard that names
// a metric no worker exports — a typo, or a metric renamed in the code.
func TestUnexportedMetricFails(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	exported := exportedNames(t)
	if p := problems(exported, dashboardQueries(t, b)); len(p) != 0 {
		t.Fatalf("the shipped dashboard already fails: %v", p)
	}
	bad := strings.Replace(string(b), "hostforge_waits_total", "hostforge_wait_total", 1)
	p := problems(exported, dashboardQueries(t, []byte(bad)))
	if len(p) != 1 || !strings.Contains(p[0], "hostforge_wait_total is not exported") {
		t.Fatalf("problems %q, want the misspelt metric", p)
	}
}

// TestMetricNames: the names a PromQL expression selects, without its
// functions, aggregations, keywords, label names and values, durations,
// numbers or Grafana variables.
func TestMetricNames(t *testing.T) {
	for _, c := range []struct {
		expr string
		want []string
	}{
		{`up`, []string{"up"}},
		{`sum by (owner) (increase(a_total{workflow="enrollment",outcome=~"fail.*"}[1h]))`, []string{"a_total"}},
		{`sum(rate(a[5m])) by (le) / on () group_left sum(b)`, []string{"a", "b"}},
		{`x / ignoring(code) group_right (owner) y`, []string{"x", "y"}},
		{`histogram_quantile(0.95, sum without (instance) (rate(h_bucket{job=~"$job"}[$__rate_interval])))`, []string{"h_bucket"}},
		{`(time() - max by (schedule) (last)) > 3 * max by (schedule) (interval) and on() count(c offset 30m) >= 5`, []string{"last", "interval", "c"}},
		{`absent(m{a="b"}) or vector(0) unless topk(3, n) > bool 1e3`, []string{"m", "n"}},
		{`SUM BY (le) (x) OR y`, []string{"x", "y"}},
		{`z{name="sum(by)"} + label_replace(w, "dst", "$1", "src", "(.*)")`, []string{"z", "w"}},
		{`series{a="1"}`, []string{"series"}},
		{`time()`, nil},
	} {
		if got := metricNames(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("metricNames(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}

// TestDeployQueriesParse: every dashboard query, with Grafana's variables
// given values, is PromQL that Prometheus accepts (promtool checks them
// as recording rules). CI installs promtool before the unit tests.
func TestDeployQueriesParse(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("HOSTFORGE_REQUIRE_PROMTOOL") == "1" {
			t.Fatal("promtool is not installed (Debian: apt-get install prometheus)")
		}
		t.Skip("promtool is not installed (Debian: apt-get install prometheus); CI runs this")
	}
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	vars := strings.NewReplacer("$__rate_interval", "5m", "$__range", "6h", "$__interval", "1m", "$job", ".*", "${datasource}", "")
	var rules []map[string]string
	for i, q := range dashboardQueries(t, b) {
		rules = append(rules, map[string]string{"record": fmt.Sprintf("dashboard:query_%d", i), "expr": vars.Replace(q.expr)})
	}
	out, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err := exec.Command(promtool, "check", "rules", path).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules on the dashboard's queries: %v\n%s", err, res)
	}
}

// PromQL words that are not metric names: aggregations, binary and set
// operators, modifiers, literals.
var promKeywords = map[string]bool{
	"sum": true, "avg": true, "min": true, "max": true, "count": true, "stddev": true, "stdvar": true, "topk": true,
	"bottomk": true, "quantile": true, "count_values": true, "group": true, "limitk": true, "limit_ratio": true,
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"bool": true, "and": true, "or": true, "unless": true, "offset": true, "atan2": true, "inf": true, "nan": true,
}

// labelListAfter are the keywords a parenthesised label list may follow.
var labelListAfter = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

// metricNames lists, in order and once each, the metric names a PromQL
// expression selects: the identifiers that are not keywords, not called
// as functions, and outside label matchers, ranges, label lists and
// strings.
func metricNames(expr string) []string {
	var names []string
	seen := map[string]bool{}
	identStart := func(c byte) bool { return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	ident := func(c byte) bool { return identStart(c) || c >= '0' && c <= '9' }
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			i = skipString(expr, i)
		case c == '{':
			i = skipBalanced(expr, i, '{', '}')
		case c == '[':
			i = skipBalanced(expr, i, '[', ']')
		case c == '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == '$': // a Grafana variable: $name or ${name}
			i++
			if i < len(expr) && expr[i] == '{' {
				i = skipBalanced(expr, i, '{', '}')
			}
			for i < len(expr) && ident(expr[i]) {
				i++
			}
		case c >= '0' && c <= '9' || c == '.':
			for i < len(expr) && (ident(expr[i]) || expr[i] == '.') {
				i++
			}
		case identStart(c):
			j := i
			for j < len(expr) && ident(expr[j]) {
				j++
			}
			word := expr[i:j]
			k := j
			for k < len(expr) && (expr[k] == ' ' || expr[k] == '\t' || expr[k] == '\n') {
				k++
			}
			lower := strings.ToLower(word)
			switch {
			case promKeywords[lower]:
				if labelListAfter[lower] && k < len(expr) && expr[k] == '(' {
					j = skipBalanced(expr, k, '(', ')')
				}
			case k < len(expr) && expr[k] == '(': // a function call
			default:
				if !seen[word] {
					seen[word] = true
					names = append(names, word)
				}
			}
			i = j
		default:
			i++
		}
	}
	return names
}

// skipString returns the index past the string literal starting at i.
func skipString(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == '\\' && q != '`':
			j++
		case s[j] == q:
			return j + 1
		}
	}
	return len(s)
}

// skipBalanced returns the index past the close matching the open at i,
// stepping over string literals.
func skipBalanced(s string, i int, open, close byte) int {
	depth := 0
	for j := i; j < len(s); {
		switch s[j] {
		case '"', '\'', '`':
			j = skipString(s, j)
			continue
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return j + 1
			}
		}
		j++
	}
	return len(s)
}
