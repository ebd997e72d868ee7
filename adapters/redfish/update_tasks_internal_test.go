package redfish

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hostforge/hostforge/internal/realdata"
)

func readDoc(t *testing.T, elems ...string) doc {
	t.Helper()
	var d doc
	if err := json.Unmarshal(realdata.Read(t, elems...), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// What the adapter reads of real Task resources: AMI's reset tasks, an
// iDRAC RAID job and DMTF's example are no firmware update; Supermicro's
// image check is; a payload that targets the UpdateService makes a task
// an update whatever its name, one that targets a reset never does.
func TestTaskInfoOfRealTasks(t *testing.T) {
	const us = "/redfish/v1/UpdateService"
	updates := map[string]bool{us: true, "/mfwupdate": true, us + "/Actions/UpdateService.SimpleUpdate": true}
	simple := readDoc(t, "redfish", "dmtf", "DSP2046-examples", "UpdateService-v1-SimpleUpdate-request-example.json")
	body, _ := json.Marshal(simple)
	cases := []struct {
		name   string
		d      doc
		update bool
		state  string
		image  string
		start  time.Time
		end    time.Time
	}{
		{name: "AMI Computer Reset, completed", d: readDoc(t, "redfish", "ami", "dgx-h100-megarac", "redfish", "v1", "TaskService", "Tasks", "1", "index.json"),
			state: "Completed", start: time.Date(2024, 2, 26, 22, 38, 48, 0, time.UTC), end: time.Date(2024, 2, 26, 22, 38, 51, 0, time.UTC)},
		{name: "AMI Computer Reset, exception", d: readDoc(t, "redfish", "ami", "dgx-h100-megarac", "redfish", "v1", "TaskService", "Tasks", "3", "index.json"),
			state: "Exception", start: time.Date(2024, 2, 27, 0, 31, 11, 0, time.UTC), end: time.Date(2024, 2, 27, 0, 31, 35, 0, time.UTC)},
		{name: "Supermicro BIOS Verify", d: readDoc(t, "redfish", "supermicro", "bmclib", "tasks", "tasks_1_running.json"), update: true,
			state: "Running", start: time.Date(2023, 11, 6, 12, 4, 16, 0, time.UTC), end: time.Date(2023, 11, 6, 12, 5, 31, 0, time.UTC)},
		{name: "iDRAC RAID configuration job", d: readDoc(t, "redfish", "dell", "sushy-oem", "task.json"), state: "Starting"},
		{name: "DMTF example task (times without seconds are unknown)", d: readDoc(t, "redfish", "dmtf", "DSP2046-examples", "Task-v1-example.json"), state: "Completed"},
		{name: "a SimpleUpdate's payload", update: true, state: "Running", image: "bmc_0260_2021.bin",
			d: doc{"@odata.id": "/redfish/v1/TaskService/Tasks/11", "Name": "Task 11", "TaskState": "Running",
				"Payload": doc{"TargetUri": us + "/Actions/UpdateService.SimpleUpdate", "HttpOperation": "POST", "JsonBody": string(body)}}},
		{name: "a push to XCC's MultipartHttpPushUri", update: true, state: "Completed",
			d: doc{"@odata.id": "/redfish/v1/TaskService/Tasks/12", "Name": "Task 12", "TaskState": "Completed", "Payload": doc{"TargetUri": "/mfwupdate"}}},
		{name: "a reset whose name speaks of firmware", state: "Completed",
			d: doc{"@odata.id": "/redfish/v1/TaskService/Tasks/13", "Name": "Firmware activation", "TaskState": "Completed",
				"Payload": doc{"TargetUri": "/redfish/v1/Systems/1/Actions/ComputerSystem.Reset"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := taskInfo("/fallback", c.d, us, updates)
			if got.Update != c.update || got.State != c.state || got.Image != c.image || !got.Start.Equal(c.start) || !got.End.Equal(c.end) {
				t.Fatalf("taskInfo = %+v; want update %v, state %s, image %q, start %s, end %s", got, c.update, c.state, c.image, c.start, c.end)
			}
			if got.ID != str(c.d, "@odata.id") {
				t.Errorf("ID %q, want the task's @odata.id", got.ID)
			}
		})
	}
}

// Placeholder LastResetTime values of real BMCs read as unknown: they
// never change, so a reset would never look done.
func TestRedfishTimePlaceholders(t *testing.T) {
	for _, s := range []string{"0000-00-00T00:00:00+00:00", "1970-01-01T00:00:00+00:00", "TIME_NA", ""} {
		if got := redfishTime(s); !got.IsZero() {
			t.Errorf("redfishTime(%q) = %s, want zero", s, got)
		}
	}
	if got := redfishTime("2024-07-26T14:40:20-05:00"); !got.Equal(time.Date(2024, 7, 26, 19, 40, 20, 0, time.UTC)) {
		t.Errorf("a real LastResetTime read as %s", got)
	}
}
