package extsim

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/internal/fleetsim"
)

// Systems a fault may target, and their operations.
const (
	// SysStore is the execution store: put (PutExecution, PutOutputs),
	// start (StartDelivery, the write-ahead), query (Executions).
	SysStore = "store"
	// SysWebhook, SysSSH and SysAnsible are the targets the runners act
	// on: deliver, exec, play.
	SysWebhook = "webhook"
	SysSSH     = "ssh"
	SysAnsible = "ansible"
)

// Catalog is what call faults target: every operation of every system
// dispatch calls.
var Catalog = map[string][]string{
	SysStore:   {"put", "start", "query"},
	SysWebhook: {"deliver"},
	SysSSH:     {"exec"},
	SysAnsible: {"play"},
}

// Writes is what lost answers target: the operations with an effect.
var Writes = map[string][]string{
	SysStore:   {"put", "start"},
	SysWebhook: {"deliver"},
	SysSSH:     {"exec"},
	SysAnsible: {"play"},
}

// WritingSteps are the dispatch steps a crash may cut off: each writes to
// the store, and extensions.run to a target.
var WritingSteps = []string{extensions.StepBegin, extensions.StepRun, extensions.StepRecord}

// TaskSpec is one task of a generated definition.
type TaskSpec struct {
	Label    string              `json:"label"`
	Type     extensions.TaskType `json:"type"`
	Continue bool                `json:"continue,omitempty"`
}

// ExtSpec is one generated extension: its tasks, bound to serverRegistered.
type ExtSpec struct {
	Name  string     `json:"name"`
	Tasks []TaskSpec `json:"tasks"`
}

// Schedule is one seeded fault schedule of extension dispatch: the
// extensions an event fires, the runtime it runs on, and the faults —
// in enrollment's schedule format (fleetsim.Fault): once the dispatch has
// run AtStep steps, the next N calls of System's Op fail as Kind, or the
// next attempt of step Op dies after its N-th write (a store write or a
// target's effect). Everything is drawn from Seed, so a failing schedule
// is replayed by its seed alone.
type Schedule struct {
	Seed       uint64           `json:"seed"`
	Extensions []ExtSpec        `json:"extensions"`
	Faults     []fleetsim.Fault `json:"faults"`
	// Local runs on the inline runtime, where a crash is the process
	// dying: the event is fired again, as a restarted worker or an
	// operator does. Otherwise it runs as under Temporal: a crash loses
	// one call, which is started again unless it runs at most once (then
	// the body hears flow.AttemptLost).
	Local bool `json:"local,omitempty"`
	// Redeliver names a task redelivered once the faults cleared.
	Redeliver string `json:"redeliver,omitempty"`
}

func (s Schedule) String() string {
	var b strings.Builder
	rt := "temporal"
	if s.Local {
		rt = "local (a crash restarts the process, which fires the event again)"
	}
	fmt.Fprintf(&b, "schedule seed=%d, runtime %s", s.Seed, rt)
	for _, x := range s.Extensions {
		var ts []string
		for _, t := range x.Tasks {
			p := "fail"
			if t.Continue {
				p = "continue"
			}
			ts = append(ts, fmt.Sprintf("%s:%s:%s", t.Label, shortType(t.Type), p))
		}
		fmt.Fprintf(&b, "\n  extension %s: %s", x.Name, strings.Join(ts, " "))
	}
	for _, f := range s.Faults {
		b.WriteString("\n  " + f.String())
	}
	if s.Redeliver != "" {
		b.WriteString("\n  then redeliver " + s.Redeliver)
	}
	return b.String()
}

func shortType(t extensions.TaskType) string {
	switch t {
	case extensions.TaskWebhook:
		return SysWebhook
	case extensions.TaskSSH:
		return SysSSH
	case extensions.TaskAnsible:
		return SysAnsible
	}
	return string(t)
}

var taskTypes = []extensions.TaskType{extensions.TaskWebhook, extensions.TaskSSH, extensions.TaskAnsible}

// Generate draws the schedule for a seed: one to three extensions of one
// to four tasks each (every type, both failure policies), one to three
// faults of every kind at every step, on either runtime.
func Generate(seed uint64) Schedule {
	rng := rand.New(rand.NewPCG(seed, 0x657874736368))
	s := Schedule{Seed: seed, Local: rng.IntN(2) == 0}
	tasks := 0
	for i, n := 0, 1+rng.IntN(3); i < n; i++ {
		x := ExtSpec{Name: fmt.Sprintf("ext-%c", 'a'+i)}
		for j, m := 0, 1+rng.IntN(4); j < m; j++ {
			x.Tasks = append(x.Tasks, TaskSpec{Label: fmt.Sprintf("t%d", j), Type: taskTypes[rng.IntN(len(taskTypes))], Continue: rng.IntN(3) == 0})
		}
		tasks += len(x.Tasks)
		s.Extensions = append(s.Extensions, x)
	}
	// A dispatch makes about four steps per task: faults land anywhere in it.
	systems := []string{SysStore, SysWebhook, SysSSH, SysAnsible}
	for i, n := 0, 1+rng.IntN(3); i < n; i++ {
		f := fleetsim.Fault{AtStep: rng.IntN(1 + 4*tasks), Kind: fleetsim.AllFaultKinds[rng.IntN(len(fleetsim.AllFaultKinds))]}
		switch {
		case f.Kind == fleetsim.FaultCrash:
			// Die after the first or second write of an attempt: no step
			// writes more than twice.
			f.System, f.N = fleetsim.SysWorker, 1+rng.IntN(2)
			f.Op = append([]string{"*"}, WritingSteps...)[rng.IntN(len(WritingSteps)+1)]
			s.Faults = append(s.Faults, f)
			continue
		case f.Kind.Lost():
			f.System = systems[rng.IntN(len(systems))]
			f.Op = Writes[f.System][rng.IntN(len(Writes[f.System]))]
		default:
			f.System = systems[rng.IntN(len(systems))]
			ops := append([]string{"*"}, Catalog[f.System]...)
			f.Op = ops[rng.IntN(len(ops))]
		}
		// Mostly blips the retries ride out; sometimes an outage longer
		// than any budget.
		if rng.IntN(4) == 0 {
			f.N = 20 + rng.IntN(40)
		} else {
			f.N = 1 + rng.IntN(2)
		}
		s.Faults = append(s.Faults, f)
	}
	if rng.IntN(3) == 0 {
		x := s.Extensions[rng.IntN(len(s.Extensions))]
		s.Redeliver = x.Name + "/" + x.Tasks[rng.IntN(len(x.Tasks))].Label
	}
	return s
}
