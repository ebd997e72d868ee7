package cli

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/flow"
)

func TestEnrollDemo(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		enrolls string // a device the summary must list as enrolled
		golden  string
	}{
		{"healthy host", []string{"cpu-r1-u10"}, ExitOK, "cpu-r1-u10", "enroll-healthy.txt"},
		{"miscabled host is on site", []string{"bad-miscabled-u30"}, ExitOnSite, "", "enroll-miscabled.txt"},
		{"routing beats on site", []string{"bad-miscabled-u30", "bad-switch-u17", "gpu-r1-u06"}, ExitInfra, "gpu-r1-u06", "enroll-mixed.txt"},
		{"no inspection skips verification", []string{"--no-inspection", "bad-miscabled-u30"}, ExitOK, "bad-miscabled-u30", ""},
		{"unknown device", []string{"no-such-host"}, ExitInfra, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, "", nil, append([]string{"enroll", "--demo", "--log-level", "off"}, tc.args...)...)
			wantCode(t, r, tc.code)
			if tc.golden != "" {
				golden(t, tc.golden, r.out)
			}
			if tc.enrolls != "" && !summaryHas(r.out, tc.enrolls, "enrolled") {
				t.Errorf("summary does not list %s as enrolled:\n%s", tc.enrolls, r.out)
			}
			if tc.code != ExitOK && !strings.Contains(r.out, "Operator actions:") {
				t.Errorf("a failed run printed no operator action:\n%s", r.out)
			}
		})
	}
}

// summaryHas reports whether the summary table has a row for device whose
// result column is result.
func summaryHas(out, device, result string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == device && f[1] == result {
			return true
		}
	}
	return false
}

func TestEnrollDemoJSON(t *testing.T) {
	r := run(t, "", nil, "enroll", "--demo", "--log-level", "off", "--parallel", "3", "-o", "json",
		"cpu-r1-u10", "bad-miscabled-u30", "bad-switch-u17", "bad-nogputype-u20")
	wantCode(t, r, ExitInfra)
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if len(lines) != 4 {
		t.Fatalf("-o json printed %d lines, want one per host:\n%s", len(lines), r.out)
	}
	// One line per host as each finishes: in the order they finish.
	want := map[string]struct {
		device, code string
		exit         int
	}{
		"cpu-r1-u10":        {"cpu-r1-u10", "", ExitOK},
		"bad-miscabled-u30": {"bad-miscabled-u30", "INSPECTION_CABLING_MISMATCH", ExitOnSite},
		"bad-switch-u17":    {"bad-switch-u17", "IRONIC_ROUTING_UNRESOLVED", ExitInfra},
		"bad-nogputype-u20": {"bad-nogputype-u20", "PLATFORM_CLASS_UNRESOLVABLE", ExitInfra},
	}
	seen := map[string]bool{}
	for i, line := range lines {
		var j enrollJSON
		if err := json.Unmarshal([]byte(line), &j); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if seen[j.Device] {
			t.Errorf("line %d: %s reported twice", i+1, j.Device)
		}
		seen[j.Device] = true
		w := want[j.Device]
		code := ""
		if j.Failure != nil {
			code = j.Failure.Code
			if j.Failure.Action == "" || j.Failure.Owner == "" {
				t.Errorf("%s: failure without owner or action: %+v", j.Device, j.Failure)
			}
		}
		if j.Device != w.device || code != w.code || j.ExitCode != w.exit || j.Enrolled != (w.code == "") {
			t.Errorf("line %d: device %s code %q exit %d enrolled %v, want %s %q %d", i+1, j.Device, code, j.ExitCode, j.Enrolled, w.device, w.code, w.exit)
		}
		if w.code == "" && (j.ProvisionState != "available" || j.PlatformClass == "" || len(j.Phases) == 0) {
			t.Errorf("%s: enrolled host JSON lacks its state: %+v", j.Device, j)
		}
	}
}

func TestEnrollDemoParallelMatchesSerial(t *testing.T) {
	args := []string{"enroll", "--demo", "--log-level", "off", "-o", "json", "gpu-r1-u02", "gpu-r1-u06", "cpu-r1-u10", "cpu-r1-u11", "hv-r1-u14", "bad-offline-u18"}
	serial := run(t, "", nil, args...)
	parallel := run(t, "", nil, append(args, "--parallel", "6")...)
	wantCode(t, serial, ExitInfra)
	wantCode(t, parallel, ExitInfra)
	// Elapsed times differ (the rack shares one virtual clock) and so do the
	// node UUIDs (the fake Ironic numbers nodes in creation order); outcomes
	// must not.
	strip := func(out string) []string {
		var rows []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var j enrollJSON
			if err := json.Unmarshal([]byte(line), &j); err != nil {
				t.Fatal(err)
			}
			if j.Enrolled && j.Node == "" {
				t.Errorf("%s: enrolled without a node", j.Device)
			}
			j.ElapsedSeconds, j.Node = 0, ""
			b, _ := json.Marshal(j)
			rows = append(rows, string(b))
		}
		return rows
	}
	s, p := strip(serial.out), strip(parallel.out)
	// Each host's line is written as it finishes: compare as sets.
	sort.Strings(s)
	sort.Strings(p)
	if strings.Join(s, "\n") != strings.Join(p, "\n") {
		t.Errorf("parallel outcomes differ from serial:\nserial:\n%s\nparallel:\n%s", strings.Join(s, "\n"), strings.Join(p, "\n"))
	}
}

func TestProgressPlainWaits(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, []string{"gpu-a"}, progressOptions{now: func() time.Time { return clock.Epoch }})
	t0 := clock.Epoch
	p.begin("gpu-a", t0)
	p.event(flow.Event{Subject: "gpu-a", Kind: "step", Step: enrollment.StepReadIntent, Outcome: hostforge.Done, At: t0.Add(3 * time.Millisecond), Took: 2603526 * time.Nanosecond})
	p.event(flow.Event{Subject: "gpu-a", Kind: "step", Step: enrollment.StepIronicInspection, Outcome: hostforge.Waiting, At: t0.Add(time.Minute),
		Wait: &hostforge.Wait{After: 5 * time.Second, Reason: enrollment.WaitReasonNodeLocked, Detail: "node locked by conductor-2"}})
	// The runtime's backoff sleeps longer than the step asked: the line
	// gives the sleep.
	p.event(flow.Event{Subject: "gpu-a", Kind: "sleep", At: t0.Add(time.Minute), Took: 20 * time.Second})
	p.event(flow.Event{Subject: "gpu-a", Kind: "step", Step: enrollment.StepIronicInspection, Outcome: hostforge.Failed, At: t0.Add(90 * time.Second),
		Failure: &hostforge.Failure{Spec: hostforge.Spec{Code: "IRONIC_INSPECTION_FAILED", Retryable: true}}})
	p.event(flow.Event{Subject: "gpu-a", Kind: "sleep", At: t0.Add(90 * time.Second), Took: 10 * time.Second})
	// A poll: done with the attempt, not with the work; said once.
	for i := range 3 {
		at := t0.Add(100*time.Second + time.Duration(i)*2*time.Second)
		p.event(flow.Event{Subject: "gpu-a", Kind: "step", Step: enrollment.StepIronicInspection, Outcome: hostforge.Done, At: at, Took: 40 * time.Millisecond})
		p.event(flow.Event{Subject: "gpu-a", Kind: "sleep", At: at, Took: 2 * time.Second})
	}
	p.event(flow.Event{Subject: "gpu-a", Kind: "step", Step: enrollment.StepIronicInspection, Outcome: hostforge.Done, At: t0.Add(107 * time.Second), Took: 30 * time.Millisecond})
	p.event(flow.Event{Subject: "gpu-a", Kind: "step", Step: enrollment.StepIronicCleaning, Outcome: hostforge.Failed, At: t0.Add(125 * time.Second),
		Failure: &hostforge.Failure{Spec: hostforge.Spec{Code: "IRONIC_CLEANING_FAILED", Owner: hostforge.OwnerInfraEng}}})
	p.finish("gpu-a", hostResult{Result: enrollment.Result{Device: "gpu-a"}, Elapsed: 125 * time.Second,
		Failure: &hostforge.Failure{Spec: hostforge.Spec{Code: "IRONIC_CLEANING_FAILED", Owner: hostforge.OwnerInfraEng}}})
	p.close()
	golden(t, "progress-plain.txt", b.String())
	if strings.Contains(b.String(), "\x1b") {
		t.Errorf("plain lines carry escape sequences:\n%q", b.String())
	}
	if strings.Contains(b.String(), "done in") && strings.Contains(b.String(), "ironic_inspection: done in") {
		t.Errorf("a poll that is in progress is reported done:\n%s", b.String())
	}
}

func TestFmtDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0ms", 391 * time.Nanosecond: "0ms", 2603526 * time.Nanosecond: "3ms", 999 * time.Millisecond: "999ms",
		999600 * time.Microsecond: "1s", 2600 * time.Millisecond: "3s", 59600 * time.Millisecond: "1m",
		65 * time.Second: "1m 5s", 17 * time.Minute: "17m", 61*time.Minute + 40*time.Second: "1h 2m", -time.Second: "0ms",
	} {
		if got := fmtDuration(d); got != want {
			t.Errorf("fmtDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
