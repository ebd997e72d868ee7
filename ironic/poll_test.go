package ironic_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hostforge/hostforge/ironic"
)

// NextPoll, table by table: a sequence of looks (oldest first) and the time
// now → the pause before the next look.
func TestNextPoll(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	s := time.Second
	pol := ironic.PollPolicy{First: s, Max: 8 * s}
	action := func(d time.Duration) ironic.Observation {
		return ironic.Observation{At: at(d), Action: ironic.ActionManage}
	}
	look := func(d time.Duration, state string, pua time.Duration) ironic.Observation {
		o := ironic.Observation{At: at(d), ProvisionState: state, TargetProvisionState: ironic.StateManageable}
		if pua != 0 {
			o.ProvisionUpdatedAt = at(pua)
		}
		return o
	}
	power := func(o ironic.Observation, state, target string) ironic.Observation {
		o.PowerState, o.TargetPowerState = state, target
		return o
	}
	for _, tt := range []struct {
		name string
		pol  ironic.PollPolicy
		obs  []ironic.Observation
		now  time.Duration
		want time.Duration
	}{
		{"nothing seen yet", pol, nil, 0, s},
		{"right after an action: soon", pol, []ironic.Observation{action(0)}, 0, s},
		{"an action Ironic took 2s to accept: still soon", pol, []ironic.Observation{action(0)}, 2 * s, s},
		{"the first look after a slow action: quiet since it was sent", pol,
			[]ironic.Observation{action(0), look(3*s, ironic.StateVerifying, 0)}, 3 * s, 4 * s},
		{"first look after the action: quiet since the action", pol,
			[]ironic.Observation{action(0), look(s, ironic.StateVerifying, 0)}, s, 2 * s},
		{"first look after the action: Ironic says when the node moved", pol,
			[]ironic.Observation{action(0), look(s, ironic.StateVerifying, 200*time.Millisecond)}, s, 1800 * time.Millisecond},
		{"a provision_updated_at from before the action is not this move", pol,
			[]ironic.Observation{action(0), power(look(s, ironic.StateManageable, -time.Hour), "", ironic.PowerOn)}, s, 2 * s},
		{"unmoved: the pauses double (looks at 1, 3, 7 s)", pol,
			[]ironic.Observation{action(0), look(s, ironic.StateVerifying, 0), look(3*s, ironic.StateVerifying, 0)}, 3 * s, 4 * s},
		{"unmoved for long: capped", pol,
			[]ironic.Observation{action(0), look(s, ironic.StateVerifying, 0), look(time.Minute, ironic.StateVerifying, 0)}, time.Minute, 8 * s},
		{"a move between two looks without Ironic's time: soon after the later look", pol,
			[]ironic.Observation{power(look(10*s, ironic.StateCleanWait, 5*s), ironic.PowerOff, ""), power(look(40*s, ironic.StateCleanWait, 5*s), ironic.PowerOn, "")}, 40 * s, s},
		{"a move between two looks: from Ironic's time of it", pol,
			[]ironic.Observation{look(10*s, ironic.StateCleaning, 5*s), look(40*s, ironic.StateCleanWait, 37*s)}, 40 * s, 4 * s},
		{"a move Ironic dates outside the gap: the later look", pol,
			[]ironic.Observation{look(10*s, ironic.StateCleaning, 5*s), look(40*s, ironic.StateCleanWait, 50*s)}, 40 * s, s},
		{"the same states, a new provision_updated_at: it moved and came back", pol,
			[]ironic.Observation{look(10*s, ironic.StateCleanWait, 5*s), look(40*s, ironic.StateCleanWait, 38*s)}, 40 * s, 3 * s},
		{"unmoved since a dated move", pol,
			[]ironic.Observation{look(10*s, ironic.StateCleaning, 5*s), look(40*s, ironic.StateCleanWait, 37*s), look(44*s, ironic.StateCleanWait, 37*s)}, 44 * s, 8 * s},
		{"first look ever, in clean wait for an hour: capped at once", pol,
			[]ironic.Observation{look(0, ironic.StateCleanWait, -time.Hour)}, 0, 8 * s},
		{"first look ever, moved 2s ago by Ironic's clock", pol,
			[]ironic.Observation{look(0, ironic.StateCleanWait, -2*s)}, 0, 3 * s},
		{"first look ever, Ironic's clock ahead of ours", pol,
			[]ironic.Observation{look(0, ironic.StateCleanWait, time.Hour)}, 0, s},
		{"first look ever, no time from Ironic", pol,
			[]ironic.Observation{look(0, ironic.StateCleanWait, 0)}, 0, s},
		{"our clock went backwards", pol,
			[]ironic.Observation{action(10 * s)}, 0, s},
		{"a ramdisk wait: the longer cap", ironic.PollPolicy{First: s, Max: 8 * s, WaitMax: time.Minute},
			[]ironic.Observation{look(0, ironic.StateCleanWait, -time.Hour)}, 0, time.Minute},
		{"the conductor working: the shorter cap", ironic.PollPolicy{First: s, Max: 8 * s, WaitMax: time.Minute},
			[]ironic.Observation{look(0, ironic.StateCleaning, -time.Hour)}, 0, 8 * s},
		{"a ramdisk wait without a longer cap", pol,
			[]ironic.Observation{look(0, ironic.StateInspectWait, -time.Hour)}, 0, 8 * s},
		{"no first poll: no pacing", ironic.PollPolicy{}, []ironic.Observation{action(0)}, time.Minute, 0},
		{"a cap below the first poll is the first poll", ironic.PollPolicy{First: 2 * s, Max: s},
			[]ironic.Observation{action(0), look(time.Minute, ironic.StateVerifying, 0)}, time.Minute, 2 * s},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ironic.NextPoll(tt.pol, tt.obs, at(tt.now)); got != tt.want {
				t.Fatalf("NextPoll = %s, want %s", got, tt.want)
			}
		})
	}
}

// Polls keeps at most three looks, and the pause NextPoll computes from
// them is the one it computes from every look: the history that travels
// in a step's progress is small and loses nothing the policy reads.
func TestPollsKeepsWhatNextPollReads(t *testing.T) {
	pol := ironic.PollPolicy{First: time.Second, Max: 30 * time.Second}
	states := []string{ironic.StateCleaning, ironic.StateCleanWait}
	powers := []string{ironic.PowerOff, ironic.PowerOn}
	r := rand.New(rand.NewPCG(1, 2))
	for run := 0; run < 500; run++ {
		t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		var p ironic.Polls
		p.Start(ironic.PollClean, ironic.ActionProvide, t0)
		all := append([]ironic.Observation(nil), p.History...)
		now, pua := t0, t0
		state, pw := states[0], powers[0]
		for i := 0; i < 30; i++ {
			now = now.Add(time.Duration(r.IntN(20000)) * time.Millisecond)
			if r.IntN(4) == 0 {
				state = states[r.IntN(2)]
				pua = now.Add(-time.Duration(r.IntN(3000)) * time.Millisecond)
			}
			if r.IntN(6) == 0 {
				pw = powers[r.IntN(2)]
			}
			o := ironic.Observation{At: now, ProvisionState: state, PowerState: pw, ProvisionUpdatedAt: pua}
			p.Add(o)
			all = append(all, o)
			if len(p.History) > 3 {
				t.Fatalf("run %d: %d looks kept", run, len(p.History))
			}
			for _, later := range []time.Duration{0, time.Second, time.Minute} {
				if got, want := ironic.NextPoll(pol, p.History, now.Add(later)), ironic.NextPoll(pol, all, now.Add(later)); got != want {
					t.Fatalf("run %d, look %d: NextPoll from the kept history %s, from every look %s", run, i, got, want)
				}
			}
		}
	}
}

// Add builds a new history rather than writing into the one it was given:
// a step's input, which a recorder may keep, never changes after the call.
func TestPollsAddLeavesItsInputAlone(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	look := func(d time.Duration) ironic.Observation {
		return ironic.Observation{At: t0.Add(d), ProvisionState: ironic.StateCleanWait}
	}
	in := ironic.Polls{Kind: ironic.PollClean, History: []ironic.Observation{look(0), look(time.Second), look(2 * time.Second)}}
	kept := append([]ironic.Observation(nil), in.History...)
	out := in
	out.Add(look(3 * time.Second))
	for i := range kept {
		if in.History[i] != kept[i] {
			t.Fatalf("the input's history changed at %d: %+v", i, in.History[i])
		}
	}
	if got := out.History[len(out.History)-1].At; !got.Equal(t0.Add(3 * time.Second)) {
		t.Fatalf("latest look at %s", got)
	}
}
