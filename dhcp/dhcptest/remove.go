package dhcptest

import (
	"context"
	"path"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/dhcp"
)

// The removal of a reservation (dhcp.Phase.Remove, a host's retirement)
// through this Remote: unloaded, content-idempotent, rolled back like a
// change, completed after a cut-off.
func init() { cases = append(cases, removeCases...) }

var removeCases = []testCase{
	{"PhaseRemoveUnloadsTheReservation", func(t *testing.T, tg Target) {
		p := newPhase(t, tg)
		a := mustConfigure(t, p, hostA, true)
		b := mustConfigure(t, p, hostB, true)
		res := mustRemove(t, p, hostA.Hostname, true)
		if res.Path != a.Path {
			t.Fatalf("Remove reports %s, want the file Configure wrote, %s", res.Path, a.Path)
		}
		st := tg.Service.State(t)
		if _, loaded := st.Loaded[path.Base(a.Path)]; loaded || !st.Running || st.Loaded[path.Base(b.Path)] != b.SHA256 || st.Restarts != 3 {
			t.Fatalf("after the removal the service state is %+v, want it running on %s only after 3 restarts", st, path.Base(b.Path))
		}
		mustList(t, tg.Remote, tg.Service.Config.Dir, path.Base(b.Path))
		mustRemove(t, p, hostA.Hostname, false)
		if st := tg.Service.State(t); st.Restarts != 3 {
			t.Fatalf("removing an absent reservation restarted the service: %+v", st)
		}
	}},
	{"PhaseRemoveOfAnUnknownHostWritesNothing", func(t *testing.T, tg Target) {
		p := newPhase(t, tg)
		mustRemove(t, p, "contract-never", false)
		if st := tg.Service.State(t); st.Restarts != 0 || !st.Running {
			t.Fatalf("service state %+v, want it running, never restarted", st)
		}
		mustList(t, tg.Remote, tg.Service.Config.Dir)
		if _, err := p.Remove(context.Background(), "bad host"); !dhcp.EntryInvalid.Is(err) {
			t.Fatalf("Remove(%q): %v, want DHCP_ENTRY_INVALID", "bad host", err)
		}
	}},
	{"PhaseRefusedRemovalRestoresTheFile", func(t *testing.T, tg Target) {
		p := newPhase(t, tg)
		a := mustConfigure(t, p, hostA, true)
		broken := path.Join(tg.Service.Config.Dir, "broken.conf")
		if err := tg.Remote.Upload(context.Background(), broken, []byte("host broken {\n")); err != nil {
			t.Fatal(err)
		}
		_, err := p.Remove(context.Background(), hostA.Hostname)
		if !dhcp.ConfigRejected.Is(err) || !strings.Contains(err.Error(), "restored the host's previous file") {
			t.Fatalf("Remove with another host's file broken: %v, want DHCP_CONFIG_REJECTED with the file restored", err)
		}
		if f, _ := hostforge.AsFailure(err); f.Phase != dhcp.RemovePhaseName {
			t.Fatalf("the removal's failure is recorded against %q, want %q", f.Phase, dhcp.RemovePhaseName)
		}
		mustHashSum(t, tg.Remote, a.Path, a.SHA256)
		if st := tg.Service.State(t); !st.Running || st.Loaded[path.Base(a.Path)] != a.SHA256 || st.Restarts != 1 {
			t.Fatalf("after a refused removal the service state is %+v, want it still running on %s, not restarted", st, path.Base(a.Path))
		}
		assertNoLeftovers(t, tg, tg.Service.Config.Dir)
		if err := tg.Remote.Remove(context.Background(), broken); err != nil {
			t.Fatal(err)
		}
		mustRemove(t, p, hostA.Hostname, true)
		mustList(t, tg.Remote, tg.Service.Config.Dir)
	}},
	{"PhaseRemovalWithAFailedRestartRestoresAndRestartsOnTheFile", func(t *testing.T, tg Target) {
		p := newPhase(t, tg)
		a := mustConfigure(t, p, hostA, true)
		tg.Service.FailRestarts(t, 1)
		_, err := p.Remove(context.Background(), hostA.Hostname)
		if !dhcp.RestartFailed.Is(err) || !strings.Contains(err.Error(), "restarted the service on it: the service is running") {
			t.Fatalf("Remove with a failing restart: %v, want DHCP_RESTART_FAILED, the service restarted on the restored file", err)
		}
		mustHashSum(t, tg.Remote, a.Path, a.SHA256)
		if st := tg.Service.State(t); !st.Running || st.Loaded[path.Base(a.Path)] != a.SHA256 {
			t.Fatalf("service state %+v, want it running on the restored reservation", st)
		}
		assertNoLeftovers(t, tg, tg.Service.Config.Dir)
		mustRemove(t, p, hostA.Hostname, true)
	}},
	{"PhaseRemovalCutOffIsCompletedByTheRerun", func(t *testing.T, tg Target) {
		p := newPhase(t, tg)
		a := mustConfigure(t, p, hostA, true)
		cut := dhcp.New(cutOff{d: tg.Dialer, file: a.Path}, tg.Service.Config, nil)
		if _, err := cut.Remove(context.Background(), hostA.Hostname); !dhcp.Transport.Is(err) {
			t.Fatalf("Remove with the connection cut after the file went: %v, want DHCP_SSH_TRANSPORT", err)
		}
		// The file is gone, but the service never tested nor loaded that:
		// the rerun must not take the absent file for a finished removal.
		if st := tg.Service.State(t); st.Loaded[path.Base(a.Path)] != a.SHA256 {
			t.Fatalf("the cut-off removal was loaded: %+v", st)
		}
		mustRemove(t, p, hostA.Hostname, true)
		if st := tg.Service.State(t); !st.Running || len(st.Loaded) != 0 {
			t.Fatalf("the rerun did not unload the reservation: %+v", st)
		}
		assertNoLeftovers(t, tg, tg.Service.Config.Dir)
	}},
}

func mustRemove(t *testing.T, p *dhcp.Phase, host string, changed bool) dhcp.Result {
	t.Helper()
	res, err := p.Remove(context.Background(), host)
	if err != nil {
		t.Fatalf("Remove(%s): %v", host, err)
	}
	if res.Changed != changed {
		t.Fatalf("Remove(%s): changed = %v, want %v", host, res.Changed, changed)
	}
	return res
}
