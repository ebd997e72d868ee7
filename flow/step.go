package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/hostforge/hostforge"
)

// Step is one registered step: a typed function, type-erased so a runtime
// can call it by name with values or with JSON.
type Step struct {
	// Name is the step's registered name; under Temporal it is the activity type.
	Name string
	// Attempt is the longest one attempt of the step may take, derived from
	// the per-call deadlines of the systems it talks to (each step documents
	// the sum where it is registered). A remote runtime bounds the step by
	// it: under Temporal it is the activity's start-to-close timeout.
	Attempt time.Duration

	call        func(ctx context.Context, in, out any, roundTrip bool) error
	policy      func(in any) CallPolicy
	decodeIn    func(in any) (any, error)
	newOut      func() any
	inTypeName  string
	outTypeName string
}

// Bind registers fn as the step name whose one attempt takes at most
// attempt. Options declare how a remote runtime runs its calls (PerCall).
func Bind[I, O any](name string, attempt time.Duration, fn func(context.Context, I) (O, error), opts ...BindOption[I]) Step {
	s := Step{
		Name:        name,
		Attempt:     attempt,
		inTypeName:  fmt.Sprintf("%T", *new(I)),
		outTypeName: fmt.Sprintf("%T", *new(O)),
		call: func(ctx context.Context, in, out any, roundTrip bool) error {
			i, ok := in.(I)
			if p, isPtr := in.(*I); !ok && isPtr && p != nil {
				// A body that polls passes its input by pointer, so a
				// large input is not copied into an interface per poll;
				// the step still gets its own copy.
				i, ok = *p, true
			}
			if !ok {
				return hostforge.Unclassified.New("step %s: input is %T, want %T", name, in, *new(I))
			}
			po, ok := out.(*O)
			if !ok && out != nil {
				return hostforge.Unclassified.New("step %s: output is %T, want *%T", name, out, *new(O))
			}
			o, err := fn(ctx, i)
			if po != nil {
				if roundTrip {
					b, merr := json.Marshal(o)
					if merr == nil {
						merr = json.Unmarshal(b, po)
					}
					if merr != nil {
						return hostforge.Unclassified.Wrap(merr, "step %s: output does not survive JSON", name)
					}
				} else {
					*po = o
				}
			}
			return err
		},
		newOut: func() any { return new(O) },
		decodeIn: func(in any) (any, error) {
			b, err := json.Marshal(in)
			if err != nil {
				return nil, err
			}
			var i I
			if err := json.Unmarshal(b, &i); err != nil {
				return nil, fmt.Errorf("decoding %T: %w", i, err)
			}
			return i, nil
		},
	}
	for _, o := range opts {
		if o.policy != nil {
			s.policy = perCall(o.policy, s.decodeIn)
		}
	}
	return s
}

// Scrubbed returns s whose error leaves scrubbed of secrets: a Failure's
// message and cause, a wait's detail (hostforge.Secrets.Err). Whatever text
// a remote system echoed into a phase's error, the runtime, its logs and
// its events see none of the values in secrets. A nil set returns s.
func (s Step) Scrubbed(secrets *hostforge.Secrets) Step {
	if secrets == nil || s.call == nil {
		return s
	}
	call := s.call
	s.call = func(ctx context.Context, in, out any, roundTrip bool) error {
		return secrets.Err(call(ctx, in, out, roundTrip))
	}
	return s
}

// Scrubbed returns steps whose every step is Step.Scrubbed with secrets,
// wrapped once here rather than on every lookup (a fleet looks steps up
// millions of times). steps is read now: a set is immutable once built.
func Scrubbed(steps Steps, secrets *hostforge.Secrets) Steps {
	if secrets == nil {
		return steps
	}
	names := steps.StepNames()
	out := scrubbedSteps{steps: make(map[string]Step, len(names)), names: names}
	for _, n := range names {
		st, _ := steps.Step(n)
		out.steps[n] = st.Scrubbed(secrets)
	}
	return out
}

type scrubbedSteps struct {
	steps map[string]Step
	names []string
}

func (s scrubbedSteps) Step(name string) (Step, bool) {
	st, ok := s.steps[name]
	return st, ok
}

func (s scrubbedSteps) StepNames() []string { return append([]string(nil), s.names...) }

// Steps is a set of steps by name: what Local runs and a remote runtime's
// worker dispatches to. *Table is one.
type Steps interface {
	// Step returns the step registered under name.
	Step(name string) (Step, bool)
	// StepNames lists every registered step, sorted.
	StepNames() []string
}

// Table is an immutable set of steps with unique names.
type Table struct {
	steps map[string]Step
	names []string
}

// NewTable builds a table from steps; a name registered twice, an empty
// name, a step without a function or without an attempt bound is an error.
func NewTable(steps ...Step) (*Table, error) {
	t := &Table{steps: make(map[string]Step, len(steps))}
	for _, s := range steps {
		switch {
		case s.Name == "":
			return nil, fmt.Errorf("flow: a step has no name")
		case s.call == nil:
			return nil, fmt.Errorf("flow: step %s has no function (build it with Bind)", s.Name)
		case s.Attempt <= 0:
			return nil, fmt.Errorf("flow: step %s has no attempt bound", s.Name)
		}
		if _, dup := t.steps[s.Name]; dup {
			return nil, fmt.Errorf("flow: step %s registered twice", s.Name)
		}
		t.steps[s.Name] = s
		t.names = append(t.names, s.Name)
	}
	sort.Strings(t.names)
	return t, nil
}

// MustTable is NewTable for tables built from constants at start-up; it
// panics on a programming error (a duplicate name).
func MustTable(steps ...Step) *Table {
	t, err := NewTable(steps...)
	if err != nil {
		panic(err)
	}
	return t
}

// Merge combines several sets into one; a name in two sets is an error.
// A worker serving several workflows registers the merged set.
func Merge(sets ...Steps) (*Table, error) {
	var all []Step
	for _, s := range sets {
		for _, n := range s.StepNames() {
			st, _ := s.Step(n)
			all = append(all, st)
		}
	}
	return NewTable(all...)
}

// Step returns the step registered under name.
func (t *Table) Step(name string) (Step, bool) {
	s, ok := t.steps[name]
	return s, ok
}

// StepNames lists the registered names, sorted.
func (t *Table) StepNames() []string { return append([]string(nil), t.names...) }

// Call runs s with a value input and decodes into out (a pointer to the
// step's output type, or nil). With roundTrip the input and the output pass
// through JSON, as under a remote runtime. The error is classified: nil, a
// *hostforge.Wait or a *hostforge.Failure.
func (s Step) Call(ctx context.Context, in, out any, roundTrip bool) error {
	if roundTrip {
		var err error
		if in, err = s.decodeIn(in); err != nil {
			return hostforge.Unclassified.Wrap(err, "step %s: input does not survive JSON", s.Name)
		}
	}
	return hostforge.Classified(s.call(ctx, in, out, roundTrip))
}

// Dispatch runs the step named step from sets with its input and output as
// JSON, for runtimes that carry step values as payloads (Temporal
// activities). The output is nil whenever the error is not: a remote
// runtime records no result for a step that did not complete.
func Dispatch(ctx context.Context, steps Steps, step string, in []byte) ([]byte, error) {
	s, ok := steps.Step(step)
	if !ok {
		return nil, hostforge.Unclassified.New("no step named %q is registered", step)
	}
	if len(in) == 0 {
		in = []byte("null")
	}
	if !json.Valid(in) {
		return nil, hostforge.Unclassified.New("step %s: input is not JSON", step)
	}
	i, err := s.decodeIn(json.RawMessage(in))
	if err != nil {
		return nil, hostforge.Unclassified.Wrap(err, "step %s: input does not decode", step)
	}
	out := s.newOut()
	if err := hostforge.Classified(s.call(ctx, i, out, false)); err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, hostforge.Unclassified.Wrap(err, "step %s: output does not encode", step)
	}
	return b, nil
}

// Dispatch runs one step of the table by name with JSON in and out (see
// the package function Dispatch).
func (t *Table) Dispatch(ctx context.Context, step string, in []byte) ([]byte, error) {
	return Dispatch(ctx, t, step, in)
}
