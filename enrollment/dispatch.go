package enrollment

import (
	"context"
	"encoding/json"

	"github.com/hostforge/hostforge"
)

// Dispatch runs one registered step by name with its input and output as
// JSON, for orchestrator adapters that carry step values as payloads (the
// Temporal activities). It decodes in into the step's input type, calls the
// step, and encodes its output. The error is nil, a *hostforge.Wait or a
// *hostforge.Failure; the output is nil whenever the error is not nil, as a
// remote orchestrator records no result for a step that did not complete.
func (e *Executor) Dispatch(ctx context.Context, step string, in []byte) ([]byte, error) {
	s, ok := e.step(step)
	if !ok {
		return nil, hostforge.Unclassified.New("no step named %q is registered", step)
	}
	if len(in) == 0 {
		in = []byte("null")
	}
	if !json.Valid(in) {
		return nil, hostforge.Unclassified.New("step %s: input is not JSON", step)
	}
	i, err := s.roundTripIn(json.RawMessage(in))
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
