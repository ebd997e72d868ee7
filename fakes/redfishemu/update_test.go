package redfishemu_test

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/redfishemu"
)

const pw = "Admin-Pass-1"

func push(t *testing.T, e http.Handler, user, params, name string, file []byte) *httptest.ResponseRecorder {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if params != "" {
		pw, _ := mw.CreateFormField("UpdateParameters")
		_, _ = pw.Write([]byte(params))
	}
	if name != "" {
		fw, _ := mw.CreateFormFile("UpdateFile", name)
		_, _ = fw.Write(file)
	}
	_ = mw.Close()
	r := httptest.NewRequest(http.MethodPost, "/redfish/v1/UpdateService/MultipartUpload", &body)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	if user != "" {
		r.SetBasicAuth(user, pw)
	}
	w := httptest.NewRecorder()
	e.ServeHTTP(w, r)
	return w
}

func TestUpdateServiceTasksAndStaging(t *testing.T) {
	clk := clock.NewFake(clock.Epoch)
	e, err := redfishemu.New("dell", redfishemu.Options{Clock: clk, AdminPassword: pw})
	if err != nil {
		t.Fatal(err)
	}
	fb, err := e.EnableFirmware(redfishemu.FirmwareOptions{Members: []fakes.FirmwareMember{{ID: "BIOS", Version: "1.0", State: "Enabled"}}})
	if err != nil {
		t.Fatal(err)
	}
	fb.AddImage("bios.bin", fakes.FirmwareImage{Targets: []string{"BIOS"}, Version: "2.0", Activation: fakes.ActivateHostReboot, TaskTime: time.Minute})
	fb.AddImage("broken.bin", fakes.FirmwareImage{Targets: []string{"BIOS"}, Version: "3.0", Activation: fakes.ActivateHostReboot, TaskEnd: "Interrupted"})

	var us map[string]any
	_ = json.Unmarshal(do(t, e, "GET", "/redfish/v1/UpdateService", "root", pw, "").Body.Bytes(), &us)
	if us["MultipartHttpPushUri"] != "/redfish/v1/UpdateService/MultipartUpload" {
		t.Fatalf("UpdateService %v", us)
	}
	cases := []struct {
		name   string
		user   string
		params string
		file   string
		code   int
	}{
		{"no credentials", "", "", "bios.bin", http.StatusUnauthorized},
		{"no UpdateFile", "root", `{"Targets": []}`, "", http.StatusBadRequest},
		{"a target the BMC lacks", "root", `{"Targets": ["/redfish/v1/Systems/Nope"]}`, "bios.bin", http.StatusBadRequest},
		{"an image for another platform", "root", "", "other.bin", http.StatusBadRequest},
		{"the BIOS image", "root", `{"Targets": ["/redfish/v1/UpdateService/FirmwareInventory/BIOS"]}`, "bios.bin", http.StatusAccepted},
	}
	var loc string
	for _, c := range cases {
		w := push(t, e, c.user, c.params, c.file, []byte("image"))
		if w.Code != c.code {
			t.Fatalf("%s: HTTP %d, want %d: %s", c.name, w.Code, c.code, w.Body)
		}
		loc = w.Header().Get("Location")
	}
	if e.Pushes() != 1 || e.PeakUploads() != 1 || e.UploadsInFlight() != 0 {
		t.Errorf("pushes %d peak %d in flight %d", e.Pushes(), e.PeakUploads(), e.UploadsInFlight())
	}
	state := func(p string) string {
		var d map[string]any
		w := do(t, e, "GET", p, "root", pw, "")
		if w.Code == http.StatusNotFound {
			return "404"
		}
		_ = json.Unmarshal(w.Body.Bytes(), &d)
		s, _ := d["TaskState"].(string)
		return s
	}
	version := func() string {
		var d map[string]any
		_ = json.Unmarshal(do(t, e, "GET", "/redfish/v1/UpdateService/FirmwareInventory/BIOS", "root", pw, "").Body.Bytes(), &d)
		v, _ := d["Version"].(string)
		return v
	}
	if s := state(loc); s != "Running" {
		t.Fatalf("task %s is %s", loc, s)
	}
	clk.Advance(2 * time.Minute)
	if s := state(loc); s != "Completed" || version() != "1.0" {
		t.Fatalf("after its time: task %s, version %s (staged, not active)", s, version())
	}
	if w := do(t, e, "POST", "/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset", "root", pw, `{"ResetType":"ForceRestart"}`); w.Code >= 300 {
		t.Fatalf("reset: %d", w.Code)
	}
	if v := version(); v != "2.0" {
		t.Fatalf("after the host reboot: %s", v)
	}
	// SimpleUpdate of a URL, a fault, a vanished task.
	w := do(t, e, "POST", "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate", "root", pw, `{"ImageURI": "https://fw.example.net/broken.bin"}`)
	if w.Code != http.StatusAccepted {
		t.Fatalf("SimpleUpdate: %d %s", w.Code, w.Body)
	}
	bad := w.Header().Get("Location")
	clk.Advance(3 * time.Minute)
	if s := state(bad); s != "Interrupted" {
		t.Errorf("the faulty task is %s", s)
	}
	if w := do(t, e, "POST", "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate", "root", pw, `{}`); w.Code != http.StatusBadRequest {
		t.Errorf("SimpleUpdate without ImageURI: %d", w.Code)
	}
	fb.ForgetTasks(true)
	if s := state(loc); s != "404" {
		t.Errorf("a forgotten task: %s", s)
	}
	// Dell lockdown is a manager attribute.
	if w := do(t, e, "PATCH", "/redfish/v1/Managers/iDRAC.Embedded.1/Attributes", "root", pw, `{"Attributes":{"Lockdown.1.SystemLockdown":"Disabled"}}`); w.Code >= 300 || fb.State().Lockdown {
		t.Errorf("lockdown PATCH: %d, lockdown %v", w.Code, fb.State().Lockdown)
	}
	if w := do(t, e, "PATCH", "/redfish/v1/Managers/iDRAC.Embedded.1/Attributes", "root", pw, `{"Attributes":{"Lockdown.1.SystemLockdown":"Maybe"}}`); w.Code != http.StatusBadRequest {
		t.Errorf("a bad lockdown value: %d", w.Code)
	}
}

// An action takes only the values its resource allows (here its inline
// ResetType@Redfish.AllowableValues; the real captures' ActionInfo
// resources are exercised through the Redfish adapter): a value outside
// them is refused with 400 and takes no effect.
func TestActionAllowableValues(t *testing.T) {
	e, err := redfishemu.New("ami", redfishemu.Options{Clock: clock.NewFake(clock.Epoch), AdminPassword: pw})
	if err != nil {
		t.Fatal(err)
	}
	fb, err := e.EnableFirmware(redfishemu.FirmwareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rt   string
		want int
	}{{"FullPowerCycle", 400}, {"ForceOff", 204}, {"Bogus", 400}, {"On", 204}} {
		r := httptest.NewRequest(http.MethodPost, "/redfish/v1/Systems/DGX/Actions/ComputerSystem.Reset", bytes.NewBufferString(`{"ResetType":"`+c.rt+`"}`))
		r.SetBasicAuth(e.AdminUser(), pw)
		w := httptest.NewRecorder()
		e.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("%s: HTTP %d, want %d: %s", c.rt, w.Code, c.want, w.Body)
		}
	}
	if rs := fb.State().Resets; len(rs) != 2 || rs[0] != "ForceOff" || rs[1] != "On" {
		t.Errorf("resets %v; a refused reset took effect", rs)
	}
}
