package redfishemu

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/fakes"
)

// The firmware side of the emulator: an UpdateService taking multipart
// pushes (MultipartHttpPushUri) and SimpleUpdate, a TaskService whose
// tasks run on the clock and then complete or fail with an injected
// fault — listed in its Tasks collection after the tree's own (a
// capture's reset tasks), with their start and end times and the request
// that started them as their Payload — a FirmwareInventory (the tree's
// own members: the real captures when the emulator serves one), staged
// firmware that only the reset its image needs makes active, the systems'
// PowerState and LastResetTime and the managers' LastResetTime as the
// resets leave them, and platform lockdown where the tree shows it
// (Dell's system lockdown attribute, Supermicro's SysLockdown, XCC's
// IPMI-over-KCS access, Oem.Lenovo.KCSEnabled). The
// firmware state is a fakes.FirmwareBMC, the same fake the firmware
// package's tests run against, so the emulator and the fake agree.

// FirmwareOptions configure EnableFirmware.
type FirmwareOptions struct {
	// Members is the inventory when the tree has no FirmwareInventory
	// members (the built-in trees); a capture's own members win.
	Members []fakes.FirmwareMember
	// NoMultipart leaves MultipartHttpPushUri out: the BMC takes
	// SimpleUpdate only.
	NoMultipart bool
	// UploadHold keeps every multipart push open this long (real time)
	// after its body arrived, as a BMC does while it checks the image.
	UploadHold time.Duration
	// Counter, when set, also counts this BMC's pushes in flight: share
	// one between the emulated BMCs of a fleet to see the fleet's peak.
	Counter *PushCounter
}

// PushCounter counts multipart pushes in flight across emulated BMCs.
type PushCounter struct {
	mu       sync.Mutex
	inFlight int
	peak     int
	total    int
}

func (c *PushCounter) begin() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inFlight++
	c.total++
	c.peak = max(c.peak, c.inFlight)
}

func (c *PushCounter) end() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inFlight--
}

// Peak is the most pushes ever in flight at once; Total counts the pushes
// received (accepted or not).
func (c *PushCounter) Peak() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peak
}

// Total counts the pushes received.
func (c *PushCounter) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Default resources of a tree that has none.
const (
	defaultPushURI   = "/redfish/v1/UpdateService/MultipartUpload"
	updateService    = "/redfish/v1/UpdateService"
	firmwareInvColl  = "/redfish/v1/UpdateService/FirmwareInventory"
	taskService      = "/redfish/v1/TaskService"
	tasksColl        = "/redfish/v1/TaskService/Tasks"
	dellLockdownAttr = "Lockdown.1.SystemLockdown"
)

type firmwareSide struct {
	fb        *fakes.FirmwareBMC
	push      string // "" without multipart
	simple    string // SimpleUpdate target
	inventory string // the FirmwareInventory collection
	hold      time.Duration
	counter   *PushCounter
	lockdown  string // the Dell manager attributes resource, "" elsewhere
	// sysLockdown is Supermicro's SysLockdown resource; kcs the XCC
	// manager whose Oem.Lenovo.KCSEnabled is lockdown's IPMI-over-KCS
	// access ("" where the tree has none).
	sysLockdown string
	kcs         string

	mu       sync.Mutex
	inFlight int
	peak     int
	pushes   int
	params   []map[string]any
	// payloads are the tasks' Payload documents (the request that
	// started each), by task Id; read and written under the emulator's
	// lock.
	payloads map[string]map[string]any
}

// EnableFirmware gives the emulator its update service, task service and
// firmware inventory, and returns the firmware state behind them: register
// the images uploads may carry with AddImage (keyed by the pushed file's
// name, or "sha256:<hex>" of its content, or for SimpleUpdate the last
// segment of the ImageURI), inject faults with Fail, TaskEnd (Exception,
// Interrupted, Killed, Cancelled) and ForgetTasks (every task answers 404).
// Call it before serving.
func (e *Emulator) EnableFirmware(o FirmwareOptions) (*fakes.FirmwareBMC, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fw != nil {
		return e.fw.fb, nil
	}
	root := e.docs["/redfish/v1"]
	if root == nil {
		return nil, errors.New("redfishemu: the tree has no service root")
	}
	us := e.docs[updateService]
	if us == nil {
		us = map[string]any{"@odata.id": updateService, "@odata.type": "#UpdateService.v1_11_0.UpdateService", "Id": "UpdateService", "Name": "Update Service",
			"ServiceEnabled": true, "Status": map[string]any{"State": "Enabled", "Health": "OK"}}
		e.docs[updateService] = us
	}
	root["UpdateService"] = map[string]any{"@odata.id": updateService}
	inv := firmwareInvColl
	if l, ok := us["FirmwareInventory"].(map[string]any); ok {
		if s, _ := l["@odata.id"].(string); s != "" {
			inv = clean(s)
		}
	}
	us["FirmwareInventory"] = map[string]any{"@odata.id": inv}
	fw := &firmwareSide{inventory: inv, hold: o.UploadHold, counter: o.Counter, payloads: map[string]map[string]any{}}
	if !o.NoMultipart {
		fw.push, _ = us["MultipartHttpPushUri"].(string)
		if fw.push == "" {
			fw.push = defaultPushURI
		}
		fw.push = clean(fw.push)
		us["MultipartHttpPushUri"] = fw.push
	} else {
		delete(us, "MultipartHttpPushUri")
	}
	actions, _ := us["Actions"].(map[string]any)
	if actions == nil {
		actions = map[string]any{}
		us["Actions"] = actions
	}
	su, _ := actions["#UpdateService.SimpleUpdate"].(map[string]any)
	if su == nil {
		su = map[string]any{"target": updateService + "/Actions/UpdateService.SimpleUpdate"}
		actions["#UpdateService.SimpleUpdate"] = su
	}
	fw.simple, _ = su["target"].(string)
	fw.simple = clean(fw.simple)

	if e.docs[taskService] == nil {
		e.docs[taskService] = map[string]any{"@odata.id": taskService, "@odata.type": "#TaskService.v1_2_0.TaskService", "Id": "TaskService", "Name": "Task Service",
			"ServiceEnabled": true, "Tasks": map[string]any{"@odata.id": tasksColl}}
	}
	root["Tasks"] = map[string]any{"@odata.id": taskService}
	if e.docs[tasksColl] == nil {
		e.docs[tasksColl] = map[string]any{"@odata.id": tasksColl, "@odata.type": "#TaskCollection.TaskCollection", "Name": "Task Collection", "Members": []any{}, "Members@odata.count": 0}
	}

	// The inventory: the tree's members, in collection order.
	var members []fakes.FirmwareMember
	for _, p := range e.memberPaths(inv) {
		d := e.docs[p]
		if d == nil {
			continue // a capped capture lists members it did not keep
		}
		members = append(members, memberOf(d, p))
	}
	if len(members) == 0 {
		members = o.Members
		if e.docs[inv] == nil {
			e.docs[inv] = map[string]any{"@odata.id": inv, "@odata.type": "#SoftwareInventoryCollection.SoftwareInventoryCollection", "Name": "Firmware Inventory Collection"}
		}
		var paths []string
		for _, m := range members {
			p := inv + "/" + m.ID
			e.docs[p] = memberDoc(nil, p, m)
			paths = append(paths, p)
		}
		e.setMembers(inv, paths)
	}

	manufacturer, model := "", ""
	for _, p := range e.memberPaths("/redfish/v1/Systems") {
		if d := e.docs[p]; d != nil {
			manufacturer, _ = d["Manufacturer"].(string)
			model, _ = d["Model"].(string)
			break
		}
	}
	vendor := map[string]string{"dell": "Dell", "lenovo": "Lenovo", "ami": "AMI", "supermicro": "Supermicro"}[e.vendor]
	fw.fb = fakes.NewFirmwareBMC(e.clock, manufacturer, model, vendor, members)

	// Lockdown where the tree shows it: iDRAC's attribute (on unless the
	// tree says otherwise), Supermicro's SysLockdown, XCC's KCS access;
	// none elsewhere.
	hasLockdown := e.vendor == "dell"
	for _, p := range e.memberPaths("/redfish/v1/Managers") {
		d := e.docs[p]
		if d == nil {
			continue
		}
		oem, _ := d["Oem"].(map[string]any)
		if smc, ok := oem["Supermicro"].(map[string]any); ok && e.vendor == "supermicro" {
			if l, ok := smc["SysLockdown"].(map[string]any); ok {
				lp, _ := l["@odata.id"].(string)
				if ld := e.docs[clean(lp)]; ld != nil {
					if on, ok := ld["SysLockdownEnabled"].(bool); ok {
						fw.sysLockdown, hasLockdown = clean(lp), true
						fw.fb.SetLockdownState(on)
					}
				}
			}
		}
		if lo, ok := oem["Lenovo"].(map[string]any); ok && e.vendor == "lenovo" {
			if on, ok := lo["KCSEnabled"].(bool); ok {
				fw.kcs, hasLockdown = p, true
				fw.fb.SetLockdownState(!on)
			}
		}
		break
	}
	if !hasLockdown {
		fw.fb.NoLockdown()
	}
	if e.vendor == "dell" {
		for _, p := range e.memberPaths("/redfish/v1/Managers") {
			a := p + "/Attributes"
			if d := e.docs[a]; d != nil {
				attrs, _ := d["Attributes"].(map[string]any)
				if attrs == nil {
					attrs = map[string]any{}
					d["Attributes"] = attrs
				}
				if _, ok := attrs[dellLockdownAttr]; !ok {
					attrs[dellLockdownAttr] = "Enabled"
				}
				fw.lockdown = a
			}
			break
		}
	}
	e.fw = fw
	return fw.fb, nil
}

// memberOf reads a FirmwareInventory member document.
func memberOf(d map[string]any, p string) fakes.FirmwareMember {
	m := fakes.FirmwareMember{ID: path.Base(p)}
	if id, _ := d["Id"].(string); id != "" {
		m.ID = id
	}
	m.Name, _ = d["Name"].(string)
	m.Version, _ = d["Version"].(string)
	if st, ok := d["Status"].(map[string]any); ok {
		m.State, _ = st["State"].(string)
	}
	return m
}

// memberDoc is a member's document: the tree's own (its other properties
// kept) with the current version and state.
func memberDoc(base map[string]any, p string, m fakes.FirmwareMember) map[string]any {
	var d map[string]any
	if base != nil {
		d = deepCopy(base).(map[string]any)
	} else {
		d = map[string]any{"@odata.type": "#SoftwareInventory.v1_4_0.SoftwareInventory", "Updateable": true}
	}
	d["@odata.id"], d["Id"] = p, m.ID
	if m.Name != "" {
		d["Name"] = m.Name
	} else if d["Name"] == nil {
		d["Name"] = m.ID
	}
	if m.Version != "" {
		d["Version"] = m.Version
	} else {
		d["Version"] = nil
	}
	if m.State != "" {
		st, _ := d["Status"].(map[string]any)
		if st == nil {
			st = map[string]any{"Health": "OK"}
		}
		st["State"] = m.State
		d["Status"] = st
	}
	return d
}

// UploadsInFlight and PeakUploads report the multipart pushes being
// received now and the most ever received at once; Pushes counts the
// pushes the BMC accepted.
func (e *Emulator) UploadsInFlight() int {
	return e.fwStat(func(f *firmwareSide) int { return f.inFlight })
}

// PeakUploads is the most multipart pushes ever received at once.
func (e *Emulator) PeakUploads() int { return e.fwStat(func(f *firmwareSide) int { return f.peak }) }

// Pushes counts the multipart pushes the BMC accepted.
func (e *Emulator) Pushes() int { return e.fwStat(func(f *firmwareSide) int { return f.pushes }) }

// UpdateParameters returns the UpdateParameters of every accepted push,
// in order (nil for a push without them).
func (e *Emulator) UpdateParameters() []map[string]any {
	e.mu.Lock()
	f := e.fw
	e.mu.Unlock()
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.params...)
}

func (e *Emulator) fwStat(get func(*firmwareSide) int) int {
	e.mu.Lock()
	f := e.fw
	e.mu.Unlock()
	if f == nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return get(f)
}

// isPush reports whether the request is a multipart push (served outside
// the emulator's lock, so that pushes overlap as on a real BMC).
func (e *Emulator) isPush(method, p string) bool {
	return e.fw != nil && e.fw.push != "" && method == http.MethodPost && p == e.fw.push
}

// maxImage bounds a pushed image.
const maxImage = 8 << 30

// servePush receives a multipart push: UpdateParameters (JSON, optional)
// and UpdateFile. It answers 202 with the new task.
func (e *Emulator) servePush(w http.ResponseWriter, r *http.Request, p string) {
	e.mu.Lock()
	if _, ok := e.auth(r); !ok {
		e.reqs = append(e.reqs, Request{r.Method, p, http.StatusUnauthorized})
		e.mu.Unlock()
		st, hdr, body := redfishError(http.StatusUnauthorized, "Base.1.8.NoValidSession", "There is no valid session established with the implementation.")
		writeResult(w, st, hdr, body)
		return
	}
	if e.busy > 0 {
		e.busy--
		msg := e.busyMsg
		e.reqs = append(e.reqs, Request{r.Method, p, http.StatusServiceUnavailable})
		e.mu.Unlock()
		st, hdr, body := redfishError(http.StatusServiceUnavailable, "Base.1.8.ServiceTemporarilyUnavailable", msg)
		writeResult(w, st, hdr, body)
		return
	}
	f := e.fw
	e.mu.Unlock()

	f.mu.Lock()
	f.inFlight++
	f.peak = max(f.peak, f.inFlight)
	f.mu.Unlock()
	f.counter.begin()
	name, digest, params, status, perr := readPush(r)
	if perr == "" && f.hold > 0 {
		t := time.NewTimer(f.hold)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		}
	}
	f.mu.Lock()
	f.inFlight--
	f.mu.Unlock()
	f.counter.end()

	e.mu.Lock()
	var res [3]any
	if perr != "" {
		st, hdr, body := redfishError(status, "Base.1.8.ActionParameterMissing", perr)
		res = [3]any{st, hdr, body}
	} else {
		st, hdr, body := e.startUpdate(name, digest, params, map[string]any{"TargetUri": f.push, "HttpOperation": "POST"})
		res = [3]any{st, hdr, body}
		if st == http.StatusAccepted {
			f.mu.Lock()
			f.pushes++
			f.params = append(f.params, params)
			f.mu.Unlock()
		}
	}
	e.reqs = append(e.reqs, Request{r.Method, p, res[0].(int)})
	e.mu.Unlock()
	hdr, _ := res[1].(map[string]string)
	writeResult(w, res[0].(int), hdr, res[2])
}

// readPush reads a multipart push; perr says what is wrong with it.
func readPush(r *http.Request) (name, digest string, params map[string]any, status int, perr string) {
	mt, mp, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || mp["boundary"] == "" {
		return "", "", nil, http.StatusUnsupportedMediaType, "A multipart push must be multipart/form-data."
	}
	mr := multipart.NewReader(io.LimitReader(r.Body, maxImage), mp["boundary"])
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", "", nil, http.StatusBadRequest, "The multipart body is malformed: " + err.Error()
		}
		switch part.FormName() {
		case "UpdateParameters":
			if err := json.NewDecoder(io.LimitReader(part, 1<<20)).Decode(&params); err != nil {
				return "", "", nil, http.StatusBadRequest, "UpdateParameters is not valid JSON."
			}
		case "UpdateFile":
			h := sha256.New()
			if _, err := io.Copy(h, part); err != nil {
				return "", "", nil, http.StatusBadRequest, "The UpdateFile part was cut short: " + err.Error()
			}
			name, digest = path.Base(part.FileName()), hex.EncodeToString(h.Sum(nil))
		default:
			_, _ = io.Copy(io.Discard, part)
		}
	}
	if digest == "" {
		return "", "", nil, http.StatusBadRequest, "The push has no UpdateFile part."
	}
	return name, digest, params, 0, ""
}

func writeResult(w http.ResponseWriter, status int, hdr map[string]string, body any) {
	for k, v := range hdr {
		w.Header().Set(k, v)
	}
	w.Header().Set("OData-Version", "4.0")
	if body != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
		return
	}
	w.WriteHeader(status)
}

// startUpdate hands an image to the firmware state and creates its task,
// which keeps payload as the request that started it. Targets, when
// given, must be members of the inventory.
func (e *Emulator) startUpdate(name, digest string, params, payload map[string]any) (int, map[string]string, any) {
	fb := e.fw.fb
	if ts, ok := params["Targets"].([]any); ok {
		for _, t := range ts {
			s, _ := t.(string)
			if e.docs[clean(s)] == nil && !strings.HasPrefix(clean(s), e.fw.inventory+"/") {
				return redfishError(http.StatusBadRequest, "Base.1.8.ActionParameterValueError", fmt.Sprintf("The value %q for Targets is not a resource of this service.", s))
			}
		}
	}
	var id string
	var err error
	for _, key := range []string{name, "sha256:" + digest} {
		if key == "" || key == "sha256:" {
			continue
		}
		if id, err = fb.Upload(context.Background(), key, ""); err == nil || !errors.Is(err, hostforge.ErrInvalid) {
			break
		}
	}
	if err != nil {
		return e.firmwareError(err)
	}
	tp := tasksColl + "/" + id
	if err == nil && params != nil {
		if ts, ok := params["Targets"]; ok {
			body, _ := json.Marshal(map[string]any{"Targets": ts})
			payload["JsonBody"] = string(body)
		}
	}
	e.fw.payloads[id] = payload
	return http.StatusAccepted, map[string]string{"Location": tp}, e.taskDoc(fakes.FirmwareTask{ID: id, State: "Running", Start: e.clock.Now()})
}

// taskDoc renders a firmware task as a Task resource, with its start and
// end times and the request that started it as its Payload.
func (e *Emulator) taskDoc(t fakes.FirmwareTask) map[string]any {
	id, state := t.ID, t.State
	tp := tasksColl + "/" + id
	d := map[string]any{"@odata.id": tp, "@odata.type": "#Task.v1_4_3.Task", "Id": id, "Name": "Firmware update " + id, "TaskState": state, "TaskStatus": "OK"}
	if !t.Start.IsZero() {
		d["StartTime"] = t.Start.UTC().Format(time.RFC3339)
	}
	if !t.End.IsZero() {
		d["EndTime"] = t.End.UTC().Format(time.RFC3339)
	}
	if p := e.fw.payloads[id]; p != nil {
		d["Payload"] = deepCopy(p)
	}
	switch state {
	case "Completed":
		d["PercentComplete"] = 100
		d["Messages"] = []any{map[string]any{"MessageId": "Base.1.8.Success", "Message": "The update completed successfully."}}
	case "Exception", "Killed", "Cancelled", "Interrupted":
		d["TaskStatus"] = "Critical"
		d["Messages"] = []any{map[string]any{"MessageId": "Update.1.0.ApplyFailed", "Message": "The update task ended " + state + "."}}
	default:
		d["PercentComplete"] = 50
	}
	return d
}

// firmwareError answers a firmware state's error as a BMC would.
func (e *Emulator) firmwareError(err error) (int, map[string]string, any) {
	switch {
	case errors.Is(err, hostforge.ErrInvalid):
		return redfishError(http.StatusBadRequest, "Update.1.0.InvalidPackage", err.Error())
	case errors.Is(err, hostforge.ErrNotFound):
		return redfishError(http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", err.Error())
	case errors.Is(err, hostforge.ErrConflict):
		return redfishError(http.StatusConflict, "Base.1.8.ResourceInUse", err.Error())
	case errors.Is(err, hostforge.ErrUnauthorized):
		return redfishError(http.StatusUnauthorized, "Base.1.8.NoValidSession", err.Error())
	}
	return redfishError(http.StatusServiceUnavailable, "Base.1.8.ServiceTemporarilyUnavailable", err.Error())
}

// firmwareRequest serves the firmware resources and actions; ok is false
// for a request it leaves to the generic handling. It runs under e.mu.
func (e *Emulator) firmwareRequest(method, p string, body map[string]any) (int, map[string]string, any, bool) {
	f := e.fw
	if f == nil {
		return 0, nil, nil, false
	}
	fb := f.fb
	switch {
	case method == http.MethodGet && p == f.inventory:
		ms, err := fb.Inventory(context.Background())
		if err != nil {
			st, h, b := e.firmwareError(err)
			return st, h, b, true
		}
		d := deepCopy(e.docs[p]).(map[string]any)
		list := make([]any, 0, len(ms))
		for _, m := range ms {
			list = append(list, map[string]any{"@odata.id": f.inventory + "/" + m.ID})
		}
		d["Members"], d["Members@odata.count"] = list, len(list)
		return http.StatusOK, nil, d, true
	case method == http.MethodGet && strings.HasPrefix(p, f.inventory+"/"):
		ms, err := fb.Inventory(context.Background())
		if err != nil {
			st, h, b := e.firmwareError(err)
			return st, h, b, true
		}
		for _, m := range ms {
			if f.inventory+"/"+m.ID == p {
				return http.StatusOK, nil, memberDoc(e.docs[p], p, m), true
			}
		}
		st, h, b := redfishError(http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+p+" was not found.")
		return st, h, b, true
	case method == http.MethodGet && p == tasksColl:
		// The tree's own tasks (a capture's resets), then the firmware's.
		ts, _, err := fb.Tasks(context.Background())
		if err != nil {
			st, h, b := e.firmwareError(err)
			return st, h, b, true
		}
		paths := e.memberPaths(tasksColl)
		for _, t := range ts {
			paths = append(paths, tasksColl+"/"+t.ID)
		}
		d := deepCopy(e.docs[p]).(map[string]any)
		list := make([]any, 0, len(paths))
		for _, tp := range paths {
			list = append(list, map[string]any{"@odata.id": tp})
		}
		d["Members"], d["Members@odata.count"] = list, len(list)
		return http.StatusOK, nil, d, true
	case method == http.MethodGet && strings.HasPrefix(p, tasksColl+"/"):
		id := path.Base(p)
		if _, ok := e.fw.payloads[id]; !ok && e.docs[p] != nil {
			return 0, nil, nil, false // a task of the tree itself
		}
		t, err := fb.TaskDetail(context.Background(), id)
		if err != nil {
			st, h, b := e.firmwareError(err)
			return st, h, b, true
		}
		return http.StatusOK, nil, e.taskDoc(t), true
	case method == http.MethodGet && e.isSystemOrManager(p):
		// The power state and last reset times are the firmware state's.
		st := fb.State()
		d := deepCopy(e.docs[p]).(map[string]any)
		if strings.HasPrefix(p, "/redfish/v1/Systems/") {
			d["PowerState"] = map[bool]string{true: "On", false: "Off"}[st.PowerOn]
			d["LastResetTime"] = st.SystemReset.UTC().Format(time.RFC3339)
		} else {
			d["LastResetTime"] = st.ManagerReset.UTC().Format(time.RFC3339)
		}
		return http.StatusOK, nil, d, true
	case method == http.MethodPost && p == f.simple:
		uri, _ := body["ImageURI"].(string)
		if uri == "" {
			st, h, b := redfishError(http.StatusBadRequest, "Base.1.8.ActionParameterMissing", "The action SimpleUpdate requires the parameter ImageURI.")
			return st, h, b, true
		}
		jb, _ := json.Marshal(body)
		st, h, b := e.startUpdate(path.Base(strings.SplitN(uri, "?", 2)[0]), "", body, map[string]any{"TargetUri": f.simple, "HttpOperation": "POST", "JsonBody": string(jb)})
		return st, h, b, true
	case method == http.MethodPost && strings.HasSuffix(p, "/Actions/ComputerSystem.Reset"):
		kind, _ := body["ResetType"].(string)
		var seq []string
		switch kind {
		case "ForceOff", "GracefulShutdown", "PushPowerButton":
			seq = []string{"ForceOff"}
		case "On", "ForceOn":
			seq = []string{"On"}
		case "ForceRestart", "GracefulRestart":
			seq = []string{"ForceRestart"}
		case "PowerCycle":
			seq = []string{"ForceOff", "On"}
			if e.vendor == "dell" { // iDRAC: a virtual AC power cycle
				seq = []string{"ACPowerCycle", "On"}
			}
		case "FullPowerCycle":
			seq = []string{"ACPowerCycle", "On"}
		default:
			st, h, b := redfishError(http.StatusBadRequest, "Base.1.8.ActionParameterValueNotInList", fmt.Sprintf("The value %q for ResetType is not supported.", kind))
			return st, h, b, true
		}
		for _, k := range seq {
			if err := fb.Reset(context.Background(), k); err != nil {
				st, h, b := e.firmwareError(err)
				return st, h, b, true
			}
		}
		return 0, nil, nil, false // the generic handling boots the host
	case method == http.MethodPost && strings.HasSuffix(p, lenovoSystemReset) && e.actionOf(p) != nil:
		// XCC's AC power cycle: the host loses and regains power, and
		// comes back on.
		for _, k := range []string{"ACPowerCycle", "On"} {
			if err := fb.Reset(context.Background(), k); err != nil {
				st, h, b := e.firmwareError(err)
				return st, h, b, true
			}
		}
		return 0, nil, nil, false // the generic handling boots the host
	case method == http.MethodPatch && p == f.sysLockdown:
		if on, ok := body["SysLockdownEnabled"].(bool); ok {
			if err := fb.SetLockdown(context.Background(), on); err != nil {
				st, h, b := e.firmwareError(err)
				return st, h, b, true
			}
		}
		return 0, nil, nil, false // the generic handling merges the property
	case method == http.MethodPatch && p == f.kcs && f.kcs != "":
		if oem, ok := body["Oem"].(map[string]any); ok {
			if l, ok := oem["Lenovo"].(map[string]any); ok {
				if on, ok := l["KCSEnabled"].(bool); ok {
					if err := fb.SetLockdown(context.Background(), !on); err != nil {
						st, h, b := e.firmwareError(err)
						return st, h, b, true
					}
				}
			}
		}
		return 0, nil, nil, false // the generic handling merges the property
	case method == http.MethodPost && strings.HasSuffix(p, "/Actions/Manager.Reset"):
		if err := fb.Reset(context.Background(), "BMCReset"); err != nil {
			st, h, b := e.firmwareError(err)
			return st, h, b, true
		}
		return 0, nil, nil, false // the generic handling takes the BMC down
	case method == http.MethodPatch && p == f.lockdown:
		if attrs, ok := body["Attributes"].(map[string]any); ok {
			if v, ok := attrs[dellLockdownAttr].(string); ok {
				if v != "Enabled" && v != "Disabled" {
					st, h, b := redfishError(http.StatusBadRequest, "Base.1.8.PropertyValueNotInList", fmt.Sprintf("The value %q for %s is not in the list of acceptable values.", v, dellLockdownAttr))
					return st, h, b, true
				}
				if err := fb.SetLockdown(context.Background(), v == "Enabled"); err != nil {
					st, h, b := e.firmwareError(err)
					return st, h, b, true
				}
			}
		}
		return 0, nil, nil, false // the generic handling merges the attribute
	}
	return 0, nil, nil, false
}

// isSystemOrManager reports a ComputerSystem or Manager resource of the
// tree (not one of their sub-resources).
func (e *Emulator) isSystemOrManager(p string) bool {
	if e.docs[p] == nil {
		return false
	}
	for _, coll := range []string{"/redfish/v1/Systems", "/redfish/v1/Managers"} {
		for _, m := range e.memberPaths(coll) {
			if m == p {
				return true
			}
		}
	}
	return false
}

// SetProperties merges props into the resource at p (a test shapes a tree:
// another system model, say). It fails for a resource the tree lacks.
func (e *Emulator) SetProperties(p string, props map[string]any) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	d := e.docs[clean(p)]
	if d == nil {
		return fmt.Errorf("redfishemu: no resource at %s", p)
	}
	merge(d, props)
	return nil
}
