package firmware_test

import (
	"testing"

	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/firmware"
)

// Lockdown is handed back as the update found it: a compliant Dell with
// lockdown off ends a direct request with lockdown off (it used to end
// with lockdown on); a drifted host with lockdown on is updated with it
// off and ends with it on; a model whose host profile disables lockdown
// ends with it off; a BMC without lockdown is never asked to change it.
func TestLockdownRestoredAsItWas(t *testing.T) {
	t.Run("compliant host, lockdown off", func(t *testing.T) {
		w := newWorld(t, firmware.Settings{})
		fb := w.dell("d1", firmware.HostReady)
		fb.SetMember(fakes.FirmwareMember{ID: "Installed-159-1.8.2__BIOS.Setup.1-1", Version: "1.13.2", State: "Enabled"})
		fb.SetMember(fakes.FirmwareMember{ID: "Installed-25227-6.00.30.00__iDRAC.Embedded.1-1", Version: "7.10.30.00", State: "Enabled"})
		fb.SetLockdownState(false)
		w.request("d1")
		if res, err := w.update("d1"); err != nil || res.Outcome != firmware.OutcomeDone {
			t.Fatalf("= %+v, %v", res, err)
		}
		st := fb.State()
		if st.Lockdown {
			t.Error("a compliant host with lockdown off ends with lockdown on")
		}
		if st.Calls["lockdown"] != 0 {
			t.Errorf("lockdown was set %d times on a host whose lockdown was off", st.Calls["lockdown"])
		}
	})
	t.Run("drifted host, lockdown on", func(t *testing.T) {
		w := newWorld(t, firmware.Settings{})
		fb := w.dell("d1", firmware.HostReady)
		w.request("d1")
		if res, err := w.update("d1"); err != nil || res.Outcome != firmware.OutcomeDone {
			t.Fatalf("= %+v, %v", res, err)
		}
		w.handedBack("d1")
		if n := fb.State().Calls["lockdown"]; n != 2 {
			t.Errorf("lockdown set %d times, want 2 (off, then on again)", n)
		}
	})
	t.Run("host profile disables lockdown", func(t *testing.T) {
		w := newWorld(t, firmware.Settings{})
		w.cat = mustParse(t, "world.toml", worldCatalog+"\n[host_models.r750.host_profile]\ndisable_lockdown = true\n")
		w.exec.Catalog = w.cat
		fb := w.dell("d1", firmware.HostReady)
		w.request("d1")
		if res, err := w.update("d1"); err != nil || res.Outcome != firmware.OutcomeDone {
			t.Fatalf("= %+v, %v", res, err)
		}
		if fb.State().Lockdown {
			t.Error("lockdown turned on again although the model's host profile disables it")
		}
	})
	t.Run("BMC without lockdown", func(t *testing.T) {
		w := newWorld(t, firmware.Settings{})
		fb := w.dgx("g1", firmware.HostReady)
		fb.NoLockdown()
		w.request("g1")
		if _, err := w.update("g1"); err != nil {
			t.Fatal(err)
		}
		if n := fb.State().Calls["lockdown"]; n != 0 {
			t.Errorf("lockdown set %d times on a BMC without it", n)
		}
	})
}
