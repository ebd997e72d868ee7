package redfishemu_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes/redfishemu"
)

func do(t *testing.T, e http.Handler, method, path, user, pw, body string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if user != "" {
		r.SetBasicAuth(user, pw)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	e.ServeHTTP(w, r)
	return w
}

func TestEmulatorAuthSessionsAndLog(t *testing.T) {
	clk := clock.NewFake(clock.Epoch)
	e, err := redfishemu.New("dell", redfishemu.Options{Clock: clk, AdminPassword: "Admin-Pass-1"})
	if err != nil {
		t.Fatal(err)
	}
	if w := do(t, e, "GET", "/redfish/v1/", "", "", ""); w.Code != 200 {
		t.Fatalf("anonymous root: %d", w.Code)
	}
	if w := do(t, e, "GET", "/redfish/v1/Managers", "", "", ""); w.Code != 401 {
		t.Fatalf("anonymous managers: %d", w.Code)
	}
	if w := do(t, e, "GET", "/redfish/v1/Managers", "root", "wrong", ""); w.Code != 401 {
		t.Fatalf("wrong password: %d", w.Code)
	}
	w := do(t, e, "POST", "/redfish/v1/SessionService/Sessions", "", "", `{"UserName":"root","Password":"Admin-Pass-1"}`)
	tok := w.Header().Get("X-Auth-Token")
	if w.Code != 201 || tok == "" {
		t.Fatalf("session: %d", w.Code)
	}
	if w := do(t, e, "GET", "/redfish/v1/Systems/System.Embedded.1", "", "", "", "X-Auth-Token", tok); w.Code != 200 {
		t.Fatalf("token GET: %d", w.Code)
	}
	if w := do(t, e, "PATCH", "/redfish/v1/Managers/iDRAC.Embedded.1/NetworkProtocol", "root", "Admin-Pass-1", `{"Gopher":{"ProtocolEnabled":true}}`); w.Code != 400 {
		t.Fatalf("unknown property accepted: %d", w.Code)
	}
	if w := do(t, e, "POST", "/redfish/v1/AccountService/Accounts", "root", "Admin-Pass-1", `{"UserName":"x","Password":"Long-enough-1"}`); w.Code != 405 {
		t.Fatalf("iDRAC account POST: %d", w.Code)
	}
	if e.Writes() != 3 { // the session POST, the PATCH and the account POST
		t.Fatalf("writes = %d, log %v", e.Writes(), e.Requests())
	}
}

func TestEmulatorIDRACJobLifecycle(t *testing.T) {
	clk := clock.NewFake(clock.Epoch)
	e, _ := redfishemu.New("dell", redfishemu.Options{Clock: clk, AdminPassword: "Admin-Pass-1"})
	auth := func(m, p, b string) *httptest.ResponseRecorder { return do(t, e, m, p, "root", "Admin-Pass-1", b) }
	w := auth("PATCH", "/redfish/v1/Systems/System.Embedded.1/Bios/Settings", `{"Attributes":{"AcPwrRcvry":"On"},"@Redfish.SettingsApplyTime":{"ApplyTime":"OnReset"}}`)
	loc := w.Header().Get("Location")
	if w.Code != 202 || !strings.Contains(loc, "/Jobs/JID_") {
		t.Fatalf("staging: %d %q", w.Code, loc)
	}
	state := func() string {
		var d map[string]any
		_ = json.Unmarshal(auth("GET", loc, "").Body.Bytes(), &d)
		return d["JobState"].(string)
	}
	if s := state(); s != "Scheduling" {
		t.Fatalf("new job %s", s)
	}
	if w := auth("PATCH", "/redfish/v1/Systems/System.Embedded.1/Bios/Settings", `{"Attributes":{"BootMode":"Uefi"}}`); w.Code != 400 || !strings.Contains(w.Body.String(), "LC068") {
		t.Fatalf("second staged write while a job is queued: %d", w.Code)
	}
	clk.Advance(e.ScheduleDelay)
	if s := state(); s != "Scheduled" {
		t.Fatalf("after the delay %s", s)
	}
	auth("POST", "/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset", `{"ResetType":"ForceRestart"}`)
	if s := state(); s != "Running" {
		t.Fatalf("after the host reset %s", s)
	}
	if w := auth("DELETE", loc, ""); w.Code != 400 {
		t.Fatalf("running job deleted: %d", w.Code)
	}
	clk.Advance(e.RunDuration)
	if s := state(); s != "Completed" {
		t.Fatalf("after running %s", s)
	}
	if a := e.Doc("/redfish/v1/Systems/System.Embedded.1/Bios")["Attributes"].(map[string]any)["AcPwrRcvry"]; a != "On" {
		t.Fatalf("job did not apply: %v", a)
	}
	auth("POST", "/redfish/v1/Managers/iDRAC.Embedded.1/Actions/Manager.Reset", `{"ResetType":"GracefulRestart"}`)
	if w := auth("GET", "/redfish/v1/Managers", ""); w.Code == 200 {
		t.Fatal("answering during the reset")
	}
	clk.Advance(90 * time.Second)
	if w := auth("GET", "/redfish/v1/Managers", ""); w.Code != 200 {
		t.Fatalf("not back after the reset: %d", w.Code)
	}
}

// TestResetToApplyAndDowntime: with ApplyPasswordOnReset a password PATCH
// is staged; the cold reset drops the service for ResetDowntime and applies
// it; a lost answer takes effect without one.
func TestResetToApplyAndDowntime(t *testing.T) {
	clk := clock.NewFake(clock.Epoch)
	e, err := redfishemu.New("lenovo", redfishemu.Options{Clock: clk, AdminPassword: "Factory-Pass-1"})
	if err != nil {
		t.Fatal(err)
	}
	user := e.AdminUser()
	acct := ""
	for _, r := range []string{"1", "2", "3"} {
		if d := e.Doc("/redfish/v1/AccountService/Accounts/" + r); d != nil && d["UserName"] == user {
			acct = "/redfish/v1/AccountService/Accounts/" + r
		}
	}
	if acct == "" {
		t.Fatal("no admin account in the tree")
	}
	e.ApplyPasswordOnReset()
	e.SetResetDowntime(45 * time.Second)
	if w := do(t, e, "PATCH", acct, user, "Factory-Pass-1", `{"Password":"Rotated-Pass-2"}`); w.Code >= 300 {
		t.Fatalf("password PATCH: %d", w.Code)
	}
	managers := func(pw string) int { return do(t, e, "GET", "/redfish/v1/Managers", user, pw, "").Code }
	if managers("Factory-Pass-1") != 200 || managers("Rotated-Pass-2") != 401 {
		t.Fatal("a staged password applied before the reset")
	}
	mgr := "/redfish/v1/Managers/1/Actions/Manager.Reset"
	if w := do(t, e, "POST", mgr, user, "Factory-Pass-1", `{"ResetType":"GracefulRestart"}`); w.Code >= 300 {
		t.Fatalf("reset: %d %s", w.Code, w.Body)
	}
	srv := httptest.NewServer(e)
	defer srv.Close()
	if _, err := srv.Client().Get(srv.URL + "/redfish/v1/"); err == nil {
		t.Fatal("the BMC answered during its reset downtime")
	}
	clk.Advance(45 * time.Second)
	if managers("Rotated-Pass-2") != 200 || managers("Factory-Pass-1") != 401 {
		t.Fatal("the reset did not apply the staged password")
	}
	if e.Resets() != 1 {
		t.Fatalf("resets = %d", e.Resets())
	}

	e.LoseAnswers("PATCH", "/NetworkProtocol", 1)
	req, _ := http.NewRequest("PATCH", srv.URL+"/redfish/v1/Managers/1/NetworkProtocol", strings.NewReader(`{"NTP":{"ProtocolEnabled":true}}`))
	req.SetBasicAuth(user, "Rotated-Pass-2")
	if _, err := srv.Client().Do(req); err == nil {
		t.Fatal("the lost answer arrived")
	}
	np := e.Doc("/redfish/v1/Managers/1/NetworkProtocol")
	if ntp, _ := np["NTP"].(map[string]any); ntp["ProtocolEnabled"] != true {
		t.Fatalf("the write whose answer was lost did not take effect: %v", np["NTP"])
	}
}
