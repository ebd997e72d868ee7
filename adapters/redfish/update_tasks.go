package redfish

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"path"
	"strings"
	"time"
	"unicode"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/firmware"
)

// Tasks lists the BMC's tasks: the TaskService's Tasks collection, its
// newest firmware.MaxTasksListed members (the collection's last), each
// read for what the BMC records of it, and the BMC's clock from the
// collection's HTTP Date header. A BMC without a TaskService has none.
//
// A task is an update (TaskInfo.Update) when its Payload's TargetUri is
// the UpdateService's MultipartHttpPushUri, HttpPushUri or SimpleUpdate
// target or any resource under the UpdateService; without a payload (most
// BMCs hide it: Supermicro's HidePayload, AMI's reset tasks have none)
// when iDRAC's Oem.Dell.JobType says FirmwareUpdate or RepositoryUpdate,
// or, without either, when its Name or Description speaks of an update,
// upgrade, firmware, flash, install or verify (Supermicro names its image
// check "BIOS Verify") and of no reset, power, configuration, export or
// import (AMI's "Computer Reset" tasks are resets). The image is the last
// segment of the payload's ImageURI (SimpleUpdate), and the targets the
// last segments of its Targets.
func (f *Firmware) Tasks(ctx context.Context, machine string) (firmware.TaskList, error) {
	c, err := f.connect(ctx, machine, false)
	if err != nil {
		return firmware.TaskList{}, err
	}
	defer c.close()
	l, err := c.tasks(ctx)
	return l, classify(err, "listing the tasks of %s", machine)
}

func (c *client) tasks(ctx context.Context) (firmware.TaskList, error) {
	var l firmware.TaskList
	root, err := c.root(ctx)
	if err != nil {
		return l, err
	}
	svcPath := link(root, "Tasks")
	if svcPath == "" {
		svcPath = "/redfish/v1/TaskService"
	}
	svc, err := c.get(ctx, svcPath)
	if errors.Is(err, hostforge.ErrNotFound) {
		return l, nil // no TaskService: no tasks
	}
	if err != nil {
		return l, err
	}
	coll := link(svc, "Tasks")
	if coll == "" {
		coll = strings.TrimSuffix(svcPath, "/") + "/Tasks"
	}
	d, now, err := c.getDated(ctx, coll)
	if errors.Is(err, hostforge.ErrNotFound) {
		return l, nil
	}
	if err != nil {
		return l, err
	}
	l.Now = now
	ms := members(d)
	if len(ms) == 0 {
		return l, nil
	}
	if len(ms) > firmware.MaxTasksListed {
		ms = ms[len(ms)-firmware.MaxTasksListed:]
	}
	updates := map[string]bool{}
	usPath, us, err := c.updateService(ctx)
	if err == nil {
		updates[usPath] = true
		for _, p := range []string{str(us, "MultipartHttpPushUri"), str(us, "HttpPushUri"), action(us, "#UpdateService.SimpleUpdate")} {
			if p != "" {
				updates[cleanPath(p)] = true
			}
		}
	}
	for _, m := range ms {
		td, err := c.get(ctx, m)
		if errors.Is(err, hostforge.ErrNotFound) {
			continue // removed while listed
		}
		if err != nil {
			return l, err
		}
		l.Tasks = append(l.Tasks, taskInfo(m, td, usPath, updates))
	}
	return l, nil
}

// taskInfo reads a Task resource at p.
func taskInfo(p string, d doc, usPath string, updates map[string]bool) firmware.TaskInfo {
	t := firmware.TaskInfo{ID: p, State: str(d, "TaskState"), Name: str(d, "Name")}
	if id := str(d, "@odata.id"); id != "" {
		t.ID = id
	}
	for _, m := range asSlice(d["Messages"]) {
		md, ok := m.(doc)
		if !ok {
			continue
		}
		if s := str(md, "Message"); s != "" {
			t.Messages = append(t.Messages, s)
		}
		for _, a := range asSlice(md["MessageArgs"]) {
			if s, ok := a.(string); ok && s != "" {
				t.Messages = append(t.Messages, s)
			}
		}
	}
	t.Start, t.End = redfishTime(str(d, "StartTime")), redfishTime(str(d, "EndTime"))
	payload, _ := d["Payload"].(doc)
	target := cleanPath(str(payload, "TargetUri"))
	switch {
	case target != "":
		t.Update = updates[target] || (usPath != "" && strings.HasPrefix(target, strings.TrimSuffix(usPath, "/")+"/"))
	case dellJobType(d) != "":
		jt := strings.ToLower(dellJobType(d))
		t.Update = strings.Contains(jt, "firmwareupdate") || strings.Contains(jt, "repositoryupdate")
	default:
		t.Update = updateWords(str(d, "Name") + " " + str(d, "Description"))
	}
	if body := payloadBody(payload); body != nil {
		if u := str(body, "ImageURI"); u != "" {
			t.Image = lastSegment(u)
		}
		for _, x := range asSlice(body["Targets"]) {
			if s, ok := x.(string); ok && s != "" {
				t.Targets = append(t.Targets, path.Base(cleanPath(s)))
			}
		}
	}
	return t
}

// payloadBody decodes a task payload's JsonBody (a string of JSON, or an
// object where a BMC inlines it).
func payloadBody(payload doc) doc {
	switch b := payload["JsonBody"].(type) {
	case doc:
		return b
	case string:
		var d doc
		if json.Unmarshal([]byte(b), &d) == nil {
			return d
		}
	}
	return nil
}

func dellJobType(d doc) string {
	oem, _ := d["Oem"].(doc)
	dell, _ := oem["Dell"].(doc)
	return str(dell, "JobType")
}

// updateWords reports a task name that speaks of a firmware update and of
// nothing else a BMC runs as a task.
func updateWords(s string) bool {
	update := false
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) }) {
		switch w {
		case "reset", "power", "restart", "configure", "configuration", "export", "import", "collect":
			return false
		case "update", "upgrade", "firmware", "flash", "install", "verify":
			update = true
		}
	}
	return update
}

// redfishTime parses a Redfish date-time; placeholders that are not times
// (iDRAC's "TIME_NA", "0000-00-00T00:00:00+00:00") and the epoch are zero.
func redfishTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil || t.Year() < 2000 {
		return time.Time{}
	}
	return t
}

func cleanPath(p string) string {
	if p == "" {
		return ""
	}
	if u, err := url.Parse(p); err == nil {
		p = u.Path
	}
	return strings.TrimSuffix(p, "/")
}

func lastSegment(u string) string {
	if pu, err := url.Parse(u); err == nil && pu.Path != "" {
		u = pu.Path
	}
	return path.Base(u)
}

// ResetStatus reads the system's PowerState and LastResetTime and the
// manager's LastResetTime. A LastResetTime that is no time (AMI's
// "0000-00-00T00:00:00+00:00", the epoch) is reported empty, as unknown:
// it never changes, and would make every reset look as if it had not
// happened.
func (f *Firmware) ResetStatus(ctx context.Context, machine string) (firmware.ResetStatus, error) {
	c, err := f.connect(ctx, machine, false)
	if err != nil {
		return firmware.ResetStatus{}, err
	}
	defer c.close()
	var st firmware.ResetStatus
	sys, err := c.system(ctx)
	if err != nil {
		return st, classify(err, "reading the power state of %s", machine)
	}
	mgr, err := c.get(ctx, c.mgr)
	if err != nil {
		return st, classify(err, "reading the BMC of %s", machine)
	}
	st.Power = str(sys, "PowerState")
	if s := str(sys, "LastResetTime"); !redfishTime(s).IsZero() {
		st.SystemLastReset = s
	}
	if s := str(mgr, "LastResetTime"); !redfishTime(s).IsZero() {
		st.ManagerLastReset = s
	}
	return st, nil
}
