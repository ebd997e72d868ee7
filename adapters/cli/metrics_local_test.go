package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// scrapeOn keeps what is written to it and, the first time the text holds
// marker, scrapes /metrics at the address the error stream announced.
type scrapeOn struct {
	out    bytes.Buffer
	errb   *bytes.Buffer
	marker string
	body   string
	failed error
}

var metricsAddr = regexp.MustCompile(`metrics on (http://\S+/metrics)`)

func (s *scrapeOn) Write(p []byte) (int, error) {
	s.out.Write(p)
	if s.body != "" || s.failed != nil || !strings.Contains(s.out.String(), s.marker) {
		return len(p), nil
	}
	m := metricsAddr.FindStringSubmatch(s.errb.String())
	if m == nil {
		s.failed = io.ErrUnexpectedEOF
		return len(p), nil
	}
	resp, err := http.Get(m[1])
	if err != nil {
		s.failed = err
		return len(p), nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	s.body = string(b)
	return len(p), nil
}

// A local enrollment with --metrics-listen serves the run's metrics while
// it runs: scraped as the host's result is printed, they count its run,
// phases and steps; the listener closes with the command.
func TestEnrollMetricsListen(t *testing.T) {
	var errb bytes.Buffer
	out := &scrapeOn{errb: &errb, marker: "cpu-r1-u10  enrolled"}
	code := Run(context.Background(), []string{"enroll", "--demo", "--metrics-listen", "127.0.0.1:0", "cpu-r1-u10"},
		Streams{In: strings.NewReader(""), Out: out, Err: &errb}, func(string) (string, bool) { return "", false })
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.out.String(), errb.String())
	}
	if out.failed != nil || out.body == "" {
		t.Fatalf("no scrape while the run ran (%v)\nstdout:\n%s\nstderr:\n%s", out.failed, out.out.String(), errb.String())
	}
	for _, want := range []string{
		`hostforge_workflow_runs_started_total{workflow="enrollment"} 1`,
		`hostforge_workflow_runs_finished_total{code="",outcome="succeeded",owner="",workflow="enrollment"} 1`,
		`hostforge_phase_duration_seconds_count{phase="ironic.inspection",status="done",workflow="enrollment"} 1`,
		`hostforge_step_duration_seconds_count{outcome="done",step="configure_dhcp"} 1`,
		"hostforge_exhausted_reprovision_retry_count 0",
	} {
		if !strings.Contains(out.body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(out.body, "cpu-r1-u10") {
		t.Error("/metrics names the device")
	}
	if _, err := http.Get(metricsAddr.FindStringSubmatch(errb.String())[1]); err == nil {
		t.Error("the metrics listener outlived the command")
	}
}

// --metrics-listen is for runs in this process.
func TestEnrollMetricsListenRefusedWithTemporal(t *testing.T) {
	r := run(t, "", nil, "enroll", "--config", "x.yaml", "--temporal", "127.0.0.1:7233", "--metrics-listen", "127.0.0.1:0", "h1")
	wantCode(t, r, 2)
	wantError(t, r, "--metrics-listen")
}
