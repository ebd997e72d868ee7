package redfish

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/internal/realdata"
)

func response(status int, location, body string) *http.Response {
	h := http.Header{}
	if location != "" {
		h.Set("Location", location)
	}
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body))}
}

func TestTaskOf(t *testing.T) {
	smc := string(realdata.Read(t, "redfish", "supermicro", "bmclib", "updateservice_ok_response.json"))
	cases := []struct {
		name, location, body, want string
	}{
		{"a Location header (iDRAC, the emulator)", "https://10.0.0.7/redfish/v1/TaskService/Tasks/JID_123456", "", "/redfish/v1/TaskService/Tasks/JID_123456"},
		{"a task monitor", "/redfish/v1/TaskService/Tasks/7/Monitor", "", "/redfish/v1/TaskService/Tasks/7"},
		{"a Task in the body", "", `{"@odata.id": "/redfish/v1/TaskService/Tasks/3", "TaskState": "New"}`, "/redfish/v1/TaskService/Tasks/3"},
		{"only an Id", "", `{"Id": "9"}`, "/redfish/v1/TaskService/Tasks/9"},
		{"Supermicro: the task in a message argument", "", smc, "/redfish/v1/TaskService/Tasks/1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := taskOf(response(202, c.location, c.body))
			if err != nil || got != c.want {
				t.Fatalf("taskOf = %q, %v; want %q", got, err, c.want)
			}
		})
	}
	if _, err := taskOf(response(202, "", `{"Accepted": {}}`)); err == nil {
		t.Error("an answer naming no task was taken")
	}
}

func FuzzTaskOf(f *testing.F) {
	if dir, ok := realdata.Dir(); ok {
		for _, p := range []string{"redfish/supermicro/bmclib/updateservice_ok_response.json", "redfish/supermicro/bmclib/updateservice_unexpected_response.json", "redfish/dell/sushy-oem/task.json"} {
			if b, err := os.ReadFile(filepath.Join(dir, p)); err == nil {
				f.Add("", b)
			}
		}
	}
	f.Add("/redfish/v1/TaskService/Tasks/JID_1", []byte(nil))
	f.Add("", []byte(`{"Id": "../../x"}`))
	f.Fuzz(func(t *testing.T, location string, body []byte) {
		got, err := taskOf(response(202, location, string(body)))
		if err == nil && !strings.HasPrefix(got, "/redfish/") {
			t.Fatalf("taskOf accepted %q", got)
		}
	})
}
