package flow_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/flow"
)

// A step's call policy is declared beside it and read from each call's
// input, however the runtime holds the input; a step without one, or an
// input the policy cannot read, gets the safe answer for each.
func TestPerCallPolicy(t *testing.T) {
	st := flow.Bind("effect", time.Hour, func(_ context.Context, i in) (out, error) { return out{}, nil },
		flow.PerCall(func(i in) flow.CallPolicy {
			if i.N == 0 {
				return flow.CallPolicy{}
			}
			return flow.CallPolicy{AtMostOnce: true, Timeout: time.Duration(i.N) * time.Second, Heartbeat: time.Duration(i.N) * time.Second}
		}))
	want := flow.CallPolicy{AtMostOnce: true, Timeout: 7 * time.Second, Heartbeat: 7 * time.Second}
	for name, input := range map[string]any{
		"value":   in{N: 7},
		"pointer": &in{N: 7},
		"JSON":    json.RawMessage(`{"n": 7}`),
		"map":     map[string]int{"n": 7},
	} {
		if got := st.Policy(input); got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
	if got := st.Policy(in{}); got != (flow.CallPolicy{}) {
		t.Errorf("an input the policy leaves alone: %+v", got)
	}
	if got := st.Policy(json.RawMessage(`"not an input"`)); !got.AtMostOnce {
		t.Errorf("an unreadable input: %+v, want at most once", got)
	}
	if got := st.Scrubbed(hostforge.NewSecrets("x")).Policy(in{N: 7}); got != want || !st.HasPolicy() {
		t.Errorf("the scrubbed step lost its policy: %+v", got)
	}
	plain, _ := scripted("plain")
	if plain.HasPolicy() || plain.Policy(in{N: 7}) != (flow.CallPolicy{}) {
		t.Error("a step without a policy must have the default one")
	}
}
