// Package redfishemu is a Redfish BMC emulator: an http.Handler for
// httptest that serves a vendor flavour — Dell iDRAC, Lenovo XCC, AMI
// MegaRAC or Supermicro — from a JSON resource tree in DMTF mockup layout
// (the resource at /redfish/v1/X is X/index.json), and implements the
// writes the BMC phase uses, with the quirks the real captures show:
//
//   - basic auth and sessions (POST SessionService/Sessions, X-Auth-Token);
//     the service root is readable anonymously;
//   - AccountService accounts: fixed slots filled and emptied by PATCH
//     (Dell, Lenovo, AMI; POST on the collection and DELETE of a slot are
//     405), POST-created accounts removed by DELETE (Supermicro);
//     passwords shorter than 8 characters refused;
//   - PATCH of Manager NetworkProtocol, EthernetInterfaces, BootOptions,
//     boot order, BIOS attributes and syslog resources; a property the
//     resource does not have is refused (400 PropertyUnknown);
//   - BIOS and boot-order staging through the @Redfish.Settings object:
//     Lenovo applies it on the next host reset; iDRAC creates a Lifecycle
//     Controller job (202 + Location) that is Scheduling, then Scheduled
//     after ScheduleDelay, Running after a host reset, Completed after
//     RunDuration; a queued or running job refuses further settings writes
//     (IDRAC.2.8.LC068 / SYS011); DELETE removes a job that is not running;
//   - an action takes only the values its resource allows: the inline
//     <Parameter>@Redfish.AllowableValues, or its @Redfish.ActionInfo
//     resource's Parameters (a refused value answers 400
//     ActionParameterValueNotInList and changes nothing); XCC's OEM
//     LenovoComputerSystem.SystemReset (ACPowerCycle) resets the host;
//   - Manager.Reset: the BMC stops answering (connections dropped) for
//     ResetDowntime (SetResetDowntime while serving); ComputerSystem.Reset
//     boots the host, and an AMI BMC answers boot writes with 503 while it
//     boots (HostBootTime);
//   - every request is authenticated again (basic auth or a session token);
//     with ApplyPasswordOnReset a password PATCH is staged and only the next
//     Manager.Reset applies it, as some BMCs do;
//   - a busy knob: the next N writes answer 503 with a message; a lost-answer
//     knob: the next N matching requests take effect and their connection
//     is dropped before the answer; a refusing knob: the next N password
//     writes answer 400 PropertyValueFormatError echoing the value, as
//     DMTF's Base registry words it (RefusePasswords);
//   - Edit changes a resource in place (a test plants a link that leaves
//     the BMC, say).
//
// Every request is logged, so a test can assert that a converged run made
// no PATCH/POST/DELETE. Time comes from an injected clock.
package redfishemu

import (
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hostforge/hostforge/clock"
)

//go:embed testdata
var trees embed.FS

// Vendors are the built-in flavours.
var Vendors = []string{"dell", "lenovo", "ami", "supermicro"}

// Request is one logged request.
type Request struct {
	Method string
	Path   string
	Status int
}

// Options configure an emulator.
type Options struct {
	// Clock drives jobs, resets and boots (a fake clock in tests).
	Clock clock.Clock
	// AdminUser and AdminPassword log in to the tree's administrator
	// account (AdminUser "" = the tree's first enabled Administrator).
	AdminUser, AdminPassword string
}

// Emulator is one emulated BMC.
type Emulator struct {
	mu     sync.Mutex
	clock  clock.Clock
	vendor string
	docs   map[string]map[string]any
	pw     map[string]string // account path → password
	tokens map[string]string // session token → account path
	reqs   []Request
	jobs   map[string]*job
	seq    int

	// Knobs; set them before serving or under the emulator's own calls.
	ScheduleDelay, RunDuration, ResetDowntime, HostBootTime time.Duration
	// NeverSchedule keeps iDRAC jobs in Scheduling.
	NeverSchedule bool
	busy          int
	busyMsg       string
	downUntil     time.Time
	bootingUntil  time.Time
	applyOnReset  bool
	staged        map[string]string // account path → password applied on reset
	lose          []*loseRule
	refuse        int
	fw            *firmwareSide // nil until EnableFirmware
}

type loseRule struct {
	method, suffix string
	n              int
}

type job struct {
	created, started time.Time
	attrs            map[string]any
	order            []any
}

// New returns an emulator of a built-in vendor tree.
func New(vendor string, o Options) (*Emulator, error) {
	sub, err := fs.Sub(trees, "testdata/"+vendor)
	if err != nil {
		return nil, err
	}
	if _, err := fs.Stat(sub, "redfish/v1/index.json"); err != nil {
		return nil, fmt.Errorf("redfishemu: no tree for vendor %q", vendor)
	}
	return load(sub, vendor, o)
}

// FromDir serves a capture tree in DMTF mockup layout (for example a real
// capture under the shared test data), with the same write handling; the
// vendor flavour is guessed from the tree's root (generic when unknown).
func FromDir(dir string, o Options) (*Emulator, error) {
	fsys := os.DirFS(dir)
	root, err := fs.ReadFile(fsys, "redfish/v1/index.json")
	if err != nil {
		return nil, err
	}
	vendor := "generic"
	s := strings.ToLower(string(root))
	for _, v := range []struct{ tell, vendor string }{{`"dell"`, "dell"}, {`"lenovo"`, "lenovo"}, {`"ami"`, "ami"}, {`"supermicro"`, "supermicro"}} {
		if strings.Contains(s, v.tell) {
			vendor = v.vendor
			break
		}
	}
	return load(fsys, vendor, o)
}

func load(fsys fs.FS, vendor string, o Options) (*Emulator, error) {
	e := &Emulator{vendor: vendor, clock: o.Clock, docs: map[string]map[string]any{}, pw: map[string]string{}, tokens: map[string]string{}, jobs: map[string]*job{},
		ScheduleDelay: 30 * time.Second, RunDuration: 3 * time.Minute, ResetDowntime: 90 * time.Second, HostBootTime: 2 * time.Minute}
	if e.clock == nil {
		e.clock = clock.Real{}
	}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Base(p) != "index.json" {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		e.docs["/"+path.Dir(p)] = doc
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The administrator's password.
	var admin string
	for _, p := range e.memberPaths("/redfish/v1/AccountService/Accounts") {
		d := e.docs[p]
		if d == nil {
			continue
		}
		u, _ := d["UserName"].(string)
		if (o.AdminUser != "" && u == o.AdminUser) || (o.AdminUser == "" && u != "" && d["RoleId"] == "Administrator" && d["Enabled"] == true) {
			admin = p
			break
		}
	}
	if admin == "" && o.AdminUser != "" {
		admin = "/redfish/v1/AccountService/Accounts/hostforge-admin"
		e.docs[admin] = map[string]any{"@odata.id": admin, "Id": "hostforge-admin", "UserName": o.AdminUser, "RoleId": "Administrator", "Enabled": true}
	}
	if admin != "" {
		e.pw[admin] = o.AdminPassword
	}
	return e, nil
}

// Vendor is the flavour served.
func (e *Emulator) Vendor() string { return e.vendor }

// AdminUser returns the administrator's user name.
func (e *Emulator) AdminUser() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	for p := range e.pw {
		if u, _ := e.docs[p]["UserName"].(string); u != "" && e.docs[p]["RoleId"] == "Administrator" {
			return u
		}
	}
	return ""
}

// SetPassword sets an account's password by user name (a factory reset).
func (e *Emulator) SetPassword(user, password string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for p, d := range e.docs {
		if d["UserName"] == user && strings.HasPrefix(p, "/redfish/v1/AccountService/Accounts/") {
			e.pw[p] = password
		}
	}
}

// SetResetDowntime sets how long a Manager.Reset keeps the BMC from
// answering; safe while the emulator serves (an integration test lets a
// worker die inside this window).
func (e *Emulator) SetResetDowntime(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ResetDowntime = d
}

// ApplyPasswordOnReset gives the BMC the profile of models that apply a
// change of an existing account's password only on their next cold reset:
// until then the old password keeps working and the new one is refused. A
// new account gets its password at once.
func (e *Emulator) ApplyPasswordOnReset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.applyOnReset = true
}

// LoseAnswers makes the next n requests with this method whose path ends
// in suffix take effect, then drops their connection before the answer.
func (e *Emulator) LoseAnswers(method, suffix string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lose = append(e.lose, &loseRule{method: method, suffix: suffix, n: n})
}

// RefusePasswords makes the next n password writes (a PATCH of an account
// or a POST creating one) answer 400 Base.1.8.PropertyValueFormatError with
// the refused value echoed in the message and in MessageArgs, as DMTF's
// Base registry defines the message ("The value %1 for the property %2 is
// of a different format than the property can accept.").
func (e *Emulator) RefusePasswords(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refuse = n
}

// refusedLocked is the echoing refusal RefusePasswords asked for, or
// status 0.
func (e *Emulator) refusedLocked(body map[string]any) (int, map[string]string, any) {
	pw, ok := body["Password"].(string)
	if !ok || e.refuse <= 0 {
		return 0, nil, nil
	}
	e.refuse--
	q, _ := json.Marshal(pw)
	msg := fmt.Sprintf("The value %s for the property Password is of a different format than the property can accept.", q)
	return http.StatusBadRequest, nil, map[string]any{"error": map[string]any{"code": "Base.1.8.GeneralError",
		"message": "A general error has occurred. See ExtendedInfo for more information.",
		"@Message.ExtendedInfo": []any{map[string]any{"MessageId": "Base.1.8.PropertyValueFormatError", "Message": msg,
			"MessageArgs": []any{pw, "Password"}, "Severity": "Warning", "Resolution": "Correct the value for the property in the request body and resubmit the request if the operation failed."}}}}
}

// Edit runs f on the live resource at p (nil when there is none), under
// the emulator's lock: a test changes what the BMC answers.
func (e *Emulator) Edit(p string, f func(d map[string]any)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	f(e.docs[clean(p)])
}

// Resets counts the Manager.Reset requests the BMC accepted.
func (e *Emulator) Resets() int {
	n := 0
	for _, r := range e.Requests() {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/Actions/Manager.Reset") && r.Status < 300 {
			n++
		}
	}
	return n
}

// Pad fills the collection at coll to n members by copying its last
// member under new ids, so a test can size the BMC like a real one: 16
// account slots, a long boot menu (each copied NIC option on a MAC of its
// own, appended to the boot order), a job queue full of completed jobs.
func (e *Emulator) Pad(coll string, n int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	coll = clean(coll)
	ms := e.memberPaths(coll)
	if len(ms) == 0 || e.docs[ms[len(ms)-1]] == nil {
		return fmt.Errorf("redfishemu: %s has no member to copy", coll)
	}
	tmpl := e.docs[ms[len(ms)-1]]
	for i := 1; len(ms) < n; i++ {
		d := deepCopy(tmpl).(map[string]any)
		id, _ := d["Id"].(string)
		switch {
		case strings.HasPrefix(id, "Boot"):
			id = fmt.Sprintf("Boot%04X", 0x100+i)
			d["BootOptionReference"] = id
			if up, ok := d["UefiDevicePath"].(string); ok {
				if j := strings.Index(up, "MAC("); j >= 0 && len(up) >= j+16 {
					d["UefiDevicePath"] = up[:j+4] + fmt.Sprintf("02AA%08X", i) + up[j+16:]
				}
			}
		case strings.HasPrefix(id, "JID_"):
			id = fmt.Sprintf("JID_%012d", 990000000000+i)
		default:
			id = fmt.Sprintf("%d", 100+i)
		}
		if strings.HasSuffix(coll, "/Accounts") { // an empty slot
			d["UserName"], d["Enabled"], d["RoleId"] = "", false, "None"
		}
		p := coll + "/" + id
		if e.docs[p] != nil {
			continue
		}
		d["Id"], d["@odata.id"] = id, p
		e.docs[p] = d
		ms = append(ms, p)
		if strings.HasSuffix(coll, "/BootOptions") {
			if sys := e.docs[path.Dir(coll)]; sys != nil {
				if b, ok := sys["Boot"].(map[string]any); ok {
					order, _ := b["BootOrder"].([]any)
					b["BootOrder"] = append(order, id)
				}
			}
		}
	}
	e.setMembers(coll, ms)
	return nil
}

// Busy makes the next n writes answer 503 with msg.
func (e *Emulator) Busy(n int, msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.busy, e.busyMsg = n, msg
}

// Requests returns the request log.
func (e *Emulator) Requests() []Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Request(nil), e.reqs...)
}

// Writes counts logged PATCH, POST, PUT and DELETE requests.
func (e *Emulator) Writes() int {
	n := 0
	for _, r := range e.Requests() {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			n++
		}
	}
	return n
}

// Doc returns a copy of a resource, for assertions.
func (e *Emulator) Doc(p string) map[string]any {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.tick()
	d := e.docs[clean(p)]
	if d == nil {
		return nil
	}
	return deepCopy(d).(map[string]any)
}

func clean(p string) string {
	p = strings.TrimSuffix(p, "/")
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	return p
}

func (e *Emulator) memberPaths(coll string) []string {
	var out []string
	if d := e.docs[coll]; d != nil {
		ms, _ := d["Members"].([]any)
		for _, m := range ms {
			if mm, ok := m.(map[string]any); ok {
				if id, ok := mm["@odata.id"].(string); ok {
					out = append(out, id)
				}
			}
		}
	}
	return out
}

func (e *Emulator) setMembers(coll string, paths []string) {
	d := e.docs[coll]
	if d == nil {
		return
	}
	ms := make([]any, 0, len(paths))
	for _, p := range paths {
		ms = append(ms, map[string]any{"@odata.id": p})
	}
	d["Members"], d["Members@odata.count"] = ms, len(ms)
}

// ServeHTTP implements http.Handler. Every answer is dated by the
// emulator's clock (the Date header), which its task times are on.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	p := clean(r.URL.Path)
	now := e.clock.Now()
	if now.Before(e.downUntil) {
		e.reqs = append(e.reqs, Request{r.Method, p, 0})
		e.mu.Unlock()
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				_ = c.Close()
				return
			}
		}
		http.Error(w, "resetting", http.StatusServiceUnavailable)
		return
	}
	if e.isPush(r.Method, p) {
		e.mu.Unlock()
		e.servePush(w, r, p)
		return
	}
	e.tick()
	status, hdr, body := e.serve(r, p, now)
	e.reqs = append(e.reqs, Request{r.Method, p, status})
	lost := e.loseLocked(r.Method, p)
	e.mu.Unlock()
	if lost {
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				_ = c.Close()
				return
			}
		}
	}
	for k, v := range hdr {
		w.Header().Set(k, v)
	}
	w.Header().Set("OData-Version", "4.0")
	// The BMC's own clock, which its task times are on.
	w.Header().Set("Date", now.UTC().Format(http.TimeFormat))
	if body != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
		return
	}
	w.WriteHeader(status)
}

// loseLocked consumes a lost-answer rule matching the request.
func (e *Emulator) loseLocked(method, p string) bool {
	for _, l := range e.lose {
		if l.n > 0 && l.method == method && strings.HasSuffix(p, l.suffix) {
			l.n--
			return true
		}
	}
	return false
}

func redfishError(status int, id, msg string) (int, map[string]string, any) {
	return status, nil, map[string]any{"error": map[string]any{"code": id, "message": msg,
		"@Message.ExtendedInfo": []any{map[string]any{"MessageId": id, "Message": msg, "Severity": "Warning"}}}}
}

func (e *Emulator) auth(r *http.Request) (string, bool) {
	if t := r.Header.Get("X-Auth-Token"); t != "" {
		a, ok := e.tokens[t]
		return a, ok
	}
	u, pw, ok := r.BasicAuth()
	if !ok {
		return "", false
	}
	return e.login(u, pw)
}

func (e *Emulator) login(user, pw string) (string, bool) {
	for p, want := range e.pw {
		d := e.docs[p]
		if d != nil && d["UserName"] == user && want == pw && user != "" && d["Enabled"] != false {
			return p, true
		}
	}
	return "", false
}

func (e *Emulator) serve(r *http.Request, p string, now time.Time) (int, map[string]string, any) {
	if r.Method == http.MethodGet && (p == "/redfish/v1" || p == "/redfish") {
		if p == "/redfish" {
			return http.StatusOK, nil, map[string]any{"v1": "/redfish/v1/"}
		}
		return http.StatusOK, nil, e.docs[p]
	}
	if r.Method == http.MethodPost && p == "/redfish/v1/SessionService/Sessions" {
		var c struct{ UserName, Password string }
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&c)
		acct, ok := e.login(c.UserName, c.Password)
		if !ok {
			return redfishError(http.StatusUnauthorized, "Base.1.8.NoValidSession", "There is no valid session established with the implementation.")
		}
		e.seq++
		id := fmt.Sprint(e.seq)
		tok := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("session-%d-%d", e.seq, now.UnixNano())))
		e.tokens[tok] = acct
		sp := "/redfish/v1/SessionService/Sessions/" + id
		e.docs[sp] = map[string]any{"@odata.id": sp, "Id": id, "UserName": c.UserName}
		e.setMembers("/redfish/v1/SessionService/Sessions", append(e.memberPaths("/redfish/v1/SessionService/Sessions"), sp))
		return http.StatusCreated, map[string]string{"X-Auth-Token": tok, "Location": sp}, e.docs[sp]
	}
	if _, ok := e.auth(r); !ok {
		return redfishError(http.StatusUnauthorized, "Base.1.8.NoValidSession", "There is no valid session established with the implementation.")
	}
	if r.Method == http.MethodGet {
		if st, hdr, b, ok := e.firmwareRequest(r.Method, p, nil); ok {
			return st, hdr, b
		}
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		d := e.docs[p]
		if d == nil {
			return redfishError(http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+p+" was not found.")
		}
		return http.StatusOK, nil, d
	case http.MethodPatch, http.MethodPost, http.MethodDelete, http.MethodPut:
		if e.busy > 0 {
			e.busy--
			return redfishError(http.StatusServiceUnavailable, "Base.1.8.ServiceTemporarilyUnavailable", e.busyMsg)
		}
	}
	var body map[string]any
	if r.Method == http.MethodPatch || r.Method == http.MethodPost {
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil && err != io.EOF {
			return redfishError(http.StatusBadRequest, "Base.1.8.MalformedJSON", "The request body submitted was malformed JSON.")
		}
		if r.Method == http.MethodPost {
			if st, hdr, b := e.refusedAction(p, body); st != 0 {
				return st, hdr, b
			}
		}
		if st, hdr, b, ok := e.firmwareRequest(r.Method, p, body); ok {
			return st, hdr, b
		}
	}
	switch r.Method {
	case http.MethodPatch:
		return e.patch(p, body, now)
	case http.MethodPost:
		return e.post(p, body, now)
	case http.MethodDelete:
		return e.delete(p)
	}
	return redfishError(http.StatusMethodNotAllowed, "Base.1.8.OperationNotAllowed", r.Method+" is not allowed on "+p)
}

func (e *Emulator) isBootWrite(p string) bool {
	return strings.Contains(p, "/BootOptions/") || (strings.HasPrefix(p, "/redfish/v1/Systems/") && strings.Count(p, "/") == 4)
}

func (e *Emulator) patch(p string, body map[string]any, now time.Time) (int, map[string]string, any) {
	d := e.docs[p]
	if d == nil {
		return redfishError(http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+p+" was not found.")
	}
	if e.vendor == "ami" && e.isBootWrite(p) && now.Before(e.bootingUntil) {
		return redfishError(http.StatusServiceUnavailable, "Base.1.8.ServiceTemporarilyUnavailable", "The host is booting; boot configuration is unavailable until POST completes.")
	}
	if strings.HasPrefix(p, "/redfish/v1/AccountService/Accounts/") {
		return e.patchAccount(p, d, body)
	}
	applyTime := body["@Redfish.SettingsApplyTime"]
	delete(body, "@Redfish.SettingsApplyTime")
	staged := e.isSettingsObject(p)
	if staged && e.vendor == "dell" {
		if st, hdr, b := e.jobBlocks(); st != 0 {
			return st, hdr, b
		}
	}
	if err := checkKnown(d, body, p); err != "" {
		return redfishError(http.StatusBadRequest, "Base.1.8.PropertyUnknown", err)
	}
	merge(d, body)
	if staged && e.vendor == "dell" {
		_ = applyTime
		id := e.newJob(now, body)
		return http.StatusAccepted, map[string]string{"Location": "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/Jobs/" + id}, nil
	}
	return http.StatusNoContent, nil, nil
}

// isSettingsObject reports whether p is some resource's @Redfish.Settings
// SettingsObject (a pending-settings resource).
func (e *Emulator) isSettingsObject(p string) bool {
	for _, d := range e.docs {
		if s, ok := d["@Redfish.Settings"].(map[string]any); ok {
			if so, ok := s["SettingsObject"].(map[string]any); ok && so["@odata.id"] == p {
				return true
			}
		}
	}
	return false
}

func (e *Emulator) jobBlocks() (int, map[string]string, any) {
	for id, j := range e.jobs {
		st := e.docs[jobPath(id)]["JobState"]
		switch {
		case st == "Running":
			return redfishError(http.StatusBadRequest, "IDRAC.2.8.SYS011", "Pending configuration values are already committed, unable to perform another set operation.")
		case st == "Scheduling" || st == "Scheduled" || st == "New":
			_ = j
			return redfishError(http.StatusBadRequest, "IDRAC.2.8.LC068", "Lifecycle Controller is currently in use by another process. A configuration job is already pending; delete it or wait for it to complete.")
		}
	}
	return 0, nil, nil
}

// checkKnown refuses properties the resource does not have (annotations and
// settings-object attributes excepted).
func checkKnown(d, body map[string]any, p string) string {
	for k, v := range body {
		if strings.HasPrefix(k, "@") {
			continue
		}
		cur, ok := d[k]
		if !ok {
			if k == "Attributes" || k == "Boot" {
				continue
			}
			return fmt.Sprintf("The property %s is not in the list of valid properties for the resource %s.", k, p)
		}
		if sub, ok := v.(map[string]any); ok && k != "Attributes" {
			if cm, ok := cur.(map[string]any); ok {
				if err := checkKnown(cm, sub, p); err != "" {
					return err
				}
			}
		}
	}
	if attrs, ok := body["Attributes"].(map[string]any); ok {
		if cur, ok := d["Attributes"].(map[string]any); ok && len(cur) > 0 {
			for k := range attrs {
				if _, ok := cur[k]; !ok {
					return fmt.Sprintf("The attribute %s is not supported by this firmware.", k)
				}
			}
		}
	}
	return ""
}

func merge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				merge(dm, sm)
				continue
			}
		}
		dst[k] = deepCopy(v)
	}
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, x := range t {
			s[i] = deepCopy(x)
		}
		return s
	}
	return v
}

func (e *Emulator) patchAccount(p string, d, body map[string]any) (int, map[string]string, any) {
	if e.vendor == "dell" && strings.HasSuffix(p, "/Accounts/1") {
		return redfishError(http.StatusBadRequest, "IDRAC.2.8.RAC0690", "Account 1 is reserved and cannot be modified.")
	}
	if st, hdr, b := e.refusedLocked(body); st != 0 {
		return st, hdr, b
	}
	if pw, ok := body["Password"]; ok {
		s, _ := pw.(string)
		if len(s) < 8 {
			return redfishError(http.StatusBadRequest, "Base.1.8.PropertyValueFormatError", "The password does not meet the complexity requirements.")
		}
		// A new user filling a slot gets its password at once; a change
		// of an existing user's password waits for the reset.
		existing, _ := d["UserName"].(string)
		if u, ok := body["UserName"].(string); ok && u != existing {
			existing = ""
		}
		if e.applyOnReset && existing != "" {
			if e.staged == nil {
				e.staged = map[string]string{}
			}
			e.staged[p] = s
		} else {
			e.pw[p] = s
		}
		delete(body, "Password")
	}
	if err := checkKnown(d, body, p); err != "" {
		return redfishError(http.StatusBadRequest, "Base.1.8.PropertyUnknown", err)
	}
	merge(d, body)
	return http.StatusOK, nil, d
}

func (e *Emulator) post(p string, body map[string]any, now time.Time) (int, map[string]string, any) {
	switch {
	case p == "/redfish/v1/AccountService/Accounts":
		if e.vendor != "supermicro" && e.vendor != "generic" {
			return redfishError(http.StatusMethodNotAllowed, "Base.1.8.OperationNotAllowed", "Accounts are fixed slots on this BMC: PATCH a free slot.")
		}
		if st, hdr, b := e.refusedLocked(body); st != 0 {
			return st, hdr, b
		}
		u, _ := body["UserName"].(string)
		pw, _ := body["Password"].(string)
		if u == "" || len(pw) < 8 {
			return redfishError(http.StatusBadRequest, "Base.1.8.PropertyValueFormatError", "UserName and a password of at least 8 characters are required.")
		}
		ids := e.memberPaths(p)
		if len(ids) >= 10 {
			return redfishError(http.StatusBadRequest, "Base.1.8.CreateLimitReachedForResource", "No free account slot.")
		}
		for _, a := range ids {
			if e.docs[a]["UserName"] == u {
				return redfishError(http.StatusBadRequest, "Base.1.8.ResourceAlreadyExists", "The user "+u+" already exists.")
			}
		}
		n := 2
		for ; e.docs[fmt.Sprintf("%s/%d", p, n)] != nil; n++ {
		}
		ap := fmt.Sprintf("%s/%d", p, n)
		delete(body, "Password")
		doc := map[string]any{"@odata.id": ap, "@odata.type": "#ManagerAccount.v1_4_0.ManagerAccount", "Id": fmt.Sprint(n), "Name": "User Account", "Enabled": true, "Locked": false, "RoleId": "ReadOnly", "Password": nil}
		merge(doc, body)
		e.docs[ap], e.pw[ap] = doc, pw
		e.setMembers(p, append(ids, ap))
		return http.StatusCreated, map[string]string{"Location": ap}, doc
	case strings.HasSuffix(p, "/Actions/Manager.Reset"):
		e.downUntil = now.Add(e.ResetDowntime)
		e.tokens = map[string]string{}
		for a, pw := range e.staged {
			e.pw[a] = pw
		}
		e.staged = nil
		return http.StatusNoContent, nil, nil
	case strings.HasSuffix(p, "/Actions/ComputerSystem.Reset"):
		e.hostReset(strings.TrimSuffix(p, "/Actions/ComputerSystem.Reset"), now)
		return http.StatusNoContent, nil, nil
	case strings.HasSuffix(p, lenovoSystemReset) && e.actionOf(p) != nil:
		e.hostReset(strings.TrimSuffix(p, lenovoSystemReset), now)
		return http.StatusNoContent, nil, nil
	}
	return redfishError(http.StatusMethodNotAllowed, "Base.1.8.OperationNotAllowed", "POST is not allowed on "+p)
}

// hostReset boots the host: Lenovo (and generic) apply pending settings,
// iDRAC starts scheduled jobs, AMI refuses boot writes while booting.
func (e *Emulator) hostReset(sys string, now time.Time) {
	e.bootingUntil = now.Add(e.HostBootTime)
	if e.vendor == "dell" {
		for id := range e.jobs {
			if d := e.docs[jobPath(id)]; d["JobState"] == "Scheduled" {
				d["JobState"], d["Message"], d["PercentComplete"] = "Running", "Job in progress.", 10
				e.jobs[id].started = now
			}
		}
		return
	}
	for _, target := range []string{sys, sys + "/Bios"} {
		d := e.docs[target]
		if d == nil {
			continue
		}
		s, _ := d["@Redfish.Settings"].(map[string]any)
		so, _ := s["SettingsObject"].(map[string]any)
		sp, _ := so["@odata.id"].(string)
		pend := e.docs[sp]
		if pend == nil {
			continue
		}
		if a, ok := pend["Attributes"].(map[string]any); ok {
			merge(d["Attributes"].(map[string]any), a)
		}
		if b, ok := pend["Boot"].(map[string]any); ok {
			if bo, ok := b["BootOrder"]; ok {
				d["Boot"].(map[string]any)["BootOrder"] = deepCopy(bo)
			}
		}
	}
}

func jobPath(id string) string { return "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/Jobs/" + id }

const jobsColl = "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/Jobs"

func (e *Emulator) newJob(now time.Time, body map[string]any) string {
	e.seq++
	id := fmt.Sprintf("JID_%012d", 740000000000+e.seq)
	j := &job{created: now}
	if a, ok := body["Attributes"].(map[string]any); ok {
		j.attrs = deepCopy(a).(map[string]any)
	}
	if b, ok := body["Boot"].(map[string]any); ok {
		j.order, _ = deepCopy(b["BootOrder"]).([]any)
	}
	e.jobs[id] = j
	e.docs[jobPath(id)] = map[string]any{"@odata.id": jobPath(id), "@odata.type": "#DellJob.v1_2_0.DellJob", "Id": id,
		"Name": "ConfigBIOS:BIOS.Setup.1-1", "JobType": "BIOSConfiguration", "JobState": "Scheduling",
		"Message": "Task successfully scheduled.", "MessageId": "JCP001", "PercentComplete": 0}
	e.setMembers(jobsColl, append(e.memberPaths(jobsColl), jobPath(id)))
	return id
}

// tick moves jobs along with the clock.
func (e *Emulator) tick() {
	now := e.clock.Now()
	ids := make([]string, 0, len(e.jobs))
	for id := range e.jobs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		j, d := e.jobs[id], e.docs[jobPath(id)]
		switch d["JobState"] {
		case "Scheduling":
			if !e.NeverSchedule && !now.Before(j.created.Add(e.ScheduleDelay)) {
				d["JobState"], d["Message"] = "Scheduled", "Task successfully scheduled."
			}
		case "Running":
			if !now.Before(j.started.Add(e.RunDuration)) {
				d["JobState"], d["Message"], d["PercentComplete"] = "Completed", "Job completed successfully.", 100
				e.applyJob(j)
			}
		}
	}
}

func (e *Emulator) applyJob(j *job) {
	sys := "/redfish/v1/Systems/System.Embedded.1"
	if j.attrs != nil {
		merge(e.docs[sys+"/Bios"]["Attributes"].(map[string]any), j.attrs)
		if s := e.docs[sys+"/Bios/Settings"]; s != nil {
			s["Attributes"] = map[string]any{}
		}
	}
	if j.order != nil {
		e.docs[sys]["Boot"].(map[string]any)["BootOrder"] = j.order
		if s := e.docs[sys+"/Settings"]; s != nil {
			delete(s, "Boot")
		}
	}
}

func (e *Emulator) delete(p string) (int, map[string]string, any) {
	if strings.HasPrefix(p, "/redfish/v1/AccountService/Accounts/") {
		return e.deleteAccount(p)
	}
	id := path.Base(p)
	j, ok := e.jobs[id]
	if !ok || path.Dir(p) != jobsColl {
		return redfishError(http.StatusMethodNotAllowed, "Base.1.8.OperationNotAllowed", "DELETE is not allowed on "+p)
	}
	if e.docs[p]["JobState"] == "Running" {
		return redfishError(http.StatusBadRequest, "IDRAC.2.8.SUP018", "Unable to delete the job because it is running.")
	}
	sys := "/redfish/v1/Systems/System.Embedded.1"
	if j.attrs != nil {
		if s := e.docs[sys+"/Bios/Settings"]; s != nil {
			s["Attributes"] = map[string]any{}
		}
	}
	if j.order != nil {
		if s := e.docs[sys+"/Settings"]; s != nil {
			delete(s, "Boot")
		}
	}
	delete(e.jobs, id)
	delete(e.docs, p)
	var keep []string
	for _, m := range e.memberPaths(jobsColl) {
		if m != p {
			keep = append(keep, m)
		}
	}
	e.setMembers(jobsColl, keep)
	return http.StatusOK, nil, map[string]any{"@Message.ExtendedInfo": []any{map[string]any{"MessageId": "SUP020", "Message": "Successfully deleted the job."}}}
}
