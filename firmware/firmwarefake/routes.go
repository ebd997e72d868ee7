package firmwarefake

import (
	"context"
	"fmt"
	"sync"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/firmware"
)

// ScoutScripts is a fake set of packaged agent scripts, by vendor, model
// and component (compared as given).
type ScoutScripts struct {
	mu sync.Mutex
	m  map[string]firmware.ScoutScript
}

var _ firmware.ScoutScripts = (*ScoutScripts)(nil)

// NewScoutScripts returns an empty set.
func NewScoutScripts() *ScoutScripts { return &ScoutScripts{m: map[string]firmware.ScoutScript{}} }

func scriptKey(vendor, model string, c firmware.ComponentType) string {
	return lower(vendor) + "/" + lower(model) + "/" + string(c)
}

// Add packages a script.
func (s *ScoutScripts) Add(vendor, model string, c firmware.ComponentType, sc firmware.ScoutScript) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[scriptKey(vendor, model, c)] = sc
}

// Lookup finds a packaged script.
func (s *ScoutScripts) Lookup(_ context.Context, vendor, model string, c firmware.ComponentType) (firmware.ScoutScript, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, ok := s.m[scriptKey(vendor, model, c)]
	return sc, ok, nil
}

// AgentBehaviour is how the fake agent answers a task.
type AgentBehaviour int

// Agent behaviours.
const (
	// AgentInstalls downloads the artifacts, installs them (staged; the
	// workflow's activation resets apply them) and reports success.
	AgentInstalls AgentBehaviour = iota
	// AgentFails reports a failed script.
	AgentFails
	// AgentSilent never reports (the host did not boot the agent).
	AgentSilent
)

// Scout is a fake on-host agent channel: an offered task is run by the
// host's agent at once, and its report goes through firmware.ReportScout
// into the store, as the server would put it.
type Scout struct {
	Store firmware.Store
	BMCs  *BMCs
	Clock clock.Clock

	mu        sync.Mutex
	behaviour map[string]AgentBehaviour
	offered   map[string]int
}

var _ firmware.Scout = (*Scout)(nil)

// NewScout returns an agent channel whose agents install by default.
func NewScout(s firmware.Store, b *BMCs, clk clock.Clock) *Scout {
	return &Scout{Store: s, BMCs: b, Clock: clk, behaviour: map[string]AgentBehaviour{}, offered: map[string]int{}}
}

// Behave sets how the machine's agent answers.
func (s *Scout) Behave(machine string, b AgentBehaviour) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.behaviour[machine] = b
}

// Offered counts the tasks offered to a machine.
func (s *Scout) Offered(machine string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.offered[machine]
}

// Offer runs the task on the host's agent.
func (s *Scout) Offer(ctx context.Context, t firmware.ScoutTask) error {
	s.mu.Lock()
	s.offered[t.MachineID]++
	b := s.behaviour[t.MachineID]
	s.mu.Unlock()
	switch b {
	case AgentSilent:
		return nil
	case AgentFails:
		return firmware.ReportScout(ctx, s.Store, s.Clock.Now(), t.MachineID, t.ID, false, "upgrade.sh: flint: -E- Burning FW image failed (exit 1)")
	}
	fb := s.BMCs.Of(t.MachineID)
	if fb == nil {
		return firmware.ReportScout(ctx, s.Store, s.Clock.Now(), t.MachineID, t.ID, false, "no host")
	}
	for _, a := range t.Artifacts {
		key := a.Filename
		if key == "" {
			key = a.URL
		}
		if err := fb.Install(key, false); err != nil {
			return firmware.ReportScout(ctx, s.Store, s.Clock.Now(), t.MachineID, t.ID, false, err.Error())
		}
	}
	return firmware.ReportScout(ctx, s.Store, s.Clock.Now(), t.MachineID, t.ID, true, fmt.Sprintf("installed %d artifact(s)", len(t.Artifacts)))
}

// Scripts is a fake local script runner. A script path runs the function
// registered for it; an unregistered path exits 127.
type Scripts struct {
	BMCs *BMCs

	mu   sync.Mutex
	m    map[string]func(ctx context.Context, job firmware.ScriptJob) (firmware.ScriptOutcome, error)
	runs map[string]int
}

var _ firmware.ScriptRunner = (*Scripts)(nil)

// NewScripts returns a runner with no scripts.
func NewScripts(b *BMCs) *Scripts {
	return &Scripts{BMCs: b, m: map[string]func(context.Context, firmware.ScriptJob) (firmware.ScriptOutcome, error){}, runs: map[string]int{}}
}

// Register makes path run fn.
func (s *Scripts) Register(path string, fn func(ctx context.Context, job firmware.ScriptJob) (firmware.ScriptOutcome, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[path] = fn
}

// Installer is a script that installs and activates the artifact on the
// job's machine, as a vendor flashing tool does, then exits 0.
func (s *Scripts) Installer(artifact string) func(context.Context, firmware.ScriptJob) (firmware.ScriptOutcome, error) {
	return func(_ context.Context, job firmware.ScriptJob) (firmware.ScriptOutcome, error) {
		fb := s.BMCs.Of(job.MachineID)
		if fb == nil {
			return firmware.ScriptOutcome{ExitCode: 2, Output: "no BMC"}, nil
		}
		if err := fb.Install(artifact, true); err != nil {
			return firmware.ScriptOutcome{ExitCode: 1, Output: err.Error()}, nil
		}
		return firmware.ScriptOutcome{OK: true, Output: "flashed " + artifact}, nil
	}
}

// Runs counts a machine's script runs.
func (s *Scripts) Runs(machine string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[machine]
}

// Run runs the job's script.
func (s *Scripts) Run(ctx context.Context, job firmware.ScriptJob) (firmware.ScriptOutcome, error) {
	s.mu.Lock()
	fn := s.m[job.Script]
	s.runs[job.MachineID]++
	s.mu.Unlock()
	if fn == nil {
		return firmware.ScriptOutcome{ExitCode: 127, Output: job.Script + ": not found"}, nil
	}
	return fn(ctx, job)
}
