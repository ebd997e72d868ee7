package netboxhttp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/netboxhttp"
	"github.com/hostforge/hostforge/internal/realdata"
)

const token = "t0k3n"

func setup(t *testing.T, opts netboxhttp.Options) (*fakes.Site, *httptest.Server) {
	t.Helper()
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h1"})
	opts.Token = token
	srv := httptest.NewServer(netboxhttp.New(site.NetBox, opts))
	t.Cleanup(srv.Close)
	return site, srv
}

func get(t *testing.T, srv *httptest.Server, method, path, auth, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s %s: answer is not a JSON object: %s", method, path, b)
	}
	return resp.StatusCode, m
}

// Every object the emulator serves carries every property the NetBox 4.2.2
// OpenAPI schema marks required, and its nested objects carry their Brief
// form's required properties.
func TestShapesHaveTheSchemasRequiredProperties(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Required []string `yaml:"required"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(realdata.Read(t, "netbox", "openapi", "netbox-4.2.2-openapi.yaml"), &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc.Components.Schemas
	site, srv := setup(t, netboxhttp.Options{})
	var dev *fakes.NBDevice
	site.NetBox.View(func(st *fakes.NetBoxState) { d := *st.DeviceByName("h1"); dev = &d })
	auth := "Token " + token
	first := func(path string) map[string]any {
		code, page := get(t, srv, "GET", path, auth, "")
		res, _ := page["results"].([]any)
		if code != 200 || len(res) == 0 {
			t.Fatalf("GET %s = %d %v", path, code, page)
		}
		for _, k := range schemas["PaginatedDeviceWithConfigContextList"].Required {
			if _, ok := page[k]; !ok {
				t.Errorf("GET %s: envelope lacks %q", path, k)
			}
		}
		return res[0].(map[string]any)
	}
	one := func(path string) map[string]any {
		code, obj := get(t, srv, "GET", path, auth, "")
		if code != 200 {
			t.Fatalf("GET %s = %d %v", path, code, obj)
		}
		return obj
	}
	var ifc map[string]any
	{
		_, page := get(t, srv, "GET", "/api/dcim/interfaces/?device_id="+itoa(dev.ID), auth, "")
		for _, r := range page["results"].([]any) {
			if r.(map[string]any)["name"] == "eth0" {
				ifc = r.(map[string]any)
			}
		}
	}
	checks := []struct {
		schema string
		obj    map[string]any
	}{
		{"DeviceWithConfigContext", first("/api/dcim/devices/?name=h1")},
		{"BriefDeviceType", first("/api/dcim/devices/?name=h1")["device_type"].(map[string]any)},
		{"BriefDeviceRole", first("/api/dcim/devices/?name=h1")["role"].(map[string]any)},
		{"BriefSite", first("/api/dcim/devices/?name=h1")["site"].(map[string]any)},
		{"BriefIPAddress", first("/api/dcim/devices/?name=h1")["oob_ip"].(map[string]any)},
		{"BriefDevice", first("/api/dcim/devices/?brief=true")},
		{"DeviceType", one("/api/dcim/device-types/" + itoa(dev.DeviceTypeID) + "/")},
		{"DeviceRole", one("/api/dcim/device-roles/" + itoa(dev.RoleID) + "/")},
		{"Interface", ifc},
		{"NestedInterface", ifc["lag"].(map[string]any)},
		{"BriefInterface", ifc["link_peers"].([]any)[0].(map[string]any)},
		{"BriefCable", ifc["cable"].(map[string]any)},
		{"Cable", first("/api/dcim/cables/?device_id=" + itoa(dev.ID))},
		{"GenericObject", first("/api/dcim/cables/?device_id=" + itoa(dev.ID))["a_terminations"].([]any)[0].(map[string]any)},
	}
	for _, c := range checks {
		req := schemas[c.schema].Required
		if len(req) == 0 {
			t.Fatalf("schema %s has no required list", c.schema)
		}
		for _, k := range req {
			if _, ok := c.obj[k]; !ok {
				t.Errorf("%s lacks required property %q", c.schema, k)
			}
		}
	}
	if ifc["link_peers_type"] != "dcim.interface" || ifc["cable_end"] != "A" {
		t.Errorf("eth0 link_peers_type %v cable_end %v, want dcim.interface, A", ifc["link_peers_type"], ifc["cable_end"])
	}
}

func TestErrorsAndAuth(t *testing.T) {
	_, srv := setup(t, netboxhttp.Options{})
	auth := "Token " + token
	tests := []struct {
		name, method, path, auth, body string
		code                           int
		field, contains                string
	}{
		{"NoToken", "GET", "/api/dcim/devices/", "", "", 403, "detail", "not provided"},
		{"WrongToken", "GET", "/api/dcim/devices/", "Token nope", "", 403, "detail", "Invalid token"},
		{"MissingDevice", "GET", "/api/dcim/devices/99999/", auth, "", 404, "detail", "No Device matches"},
		{"BadStatus", "PATCH", "/api/dcim/devices/99999/", auth, `{"status":"bogus"}`, 404, "detail", "No Device"},
		{"BadFilter", "GET", "/api/dcim/interfaces/?device_id=abc", auth, "", 400, "device_id", "valid choice"},
		{"UnknownTag", "POST", "/api/extras/tags/", auth, `{"name":"x y","slug":"x y"}`, 400, "slug", "valid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := get(t, srv, tc.method, tc.path, tc.auth, tc.body)
			if code != tc.code {
				t.Fatalf("%s %s = %d %v, want %d", tc.method, tc.path, code, body, tc.code)
			}
			if !strings.Contains(jsonString(body[tc.field]), tc.contains) {
				t.Errorf("body %v: %s does not contain %q", body, tc.field, tc.contains)
			}
		})
	}
}

func TestPatchRefusesBadValuesAndChangesNothing(t *testing.T) {
	site, srv := setup(t, netboxhttp.Options{})
	var id int
	site.NetBox.View(func(st *fakes.NetBoxState) { id = st.DeviceByName("h1").ID })
	path := "/api/dcim/devices/" + itoa(id) + "/"
	auth := "Token " + token
	for body, field := range map[string]string{
		`{"status":"bogus","custom_fields":{"platform_class":"X"}}`: "status",
		`{"custom_fields":{"no_such_field":"X"}}`:                   "custom_fields",
		`{"tags":[{"slug":"no-such-tag"}]}`:                         "tags",
		`{"name":"renamed"}`:                                        "name",
	} {
		code, resp := get(t, srv, "PATCH", path, auth, body)
		if code != 400 || resp[field] == nil {
			t.Errorf("PATCH %s = %d %v, want 400 naming %s", body, code, resp, field)
		}
	}
	site.NetBox.View(func(st *fakes.NetBoxState) {
		d := st.Devices[id]
		if d.Status != "staged" || d.CustomFields["platform_class"] != nil || len(d.TagIDs) != 0 || d.Name != "h1" {
			t.Errorf("refused PATCHes changed the device: %+v", d)
		}
	})
}

func TestPagination(t *testing.T) {
	_, srv := setup(t, netboxhttp.Options{MaxPageSize: 2})
	auth := "Token " + token
	seen := 0
	path := "/api/dcim/devices/?limit=1000"
	pagesSeen := 0
	for pages := 0; path != ""; pages++ {
		pagesSeen++
		code, page := get(t, srv, "GET", path, auth, "")
		if code != 200 || pages > 10 {
			t.Fatalf("GET %s = %d", path, code)
		}
		seen += len(page["results"].([]any))
		if pages == 0 && page["previous"] != nil {
			t.Errorf("first page has previous %v", page["previous"])
		}
		path = ""
		if next, ok := page["next"].(string); ok {
			path = strings.TrimPrefix(next, srv.URL)
		}
		if int(page["count"].(float64)) != 3 { // h1 + two leaves
			t.Fatalf("count = %v, want 3", page["count"])
		}
	}
	if seen != 3 || pagesSeen != 2 {
		t.Errorf("saw %d devices on %d pages, want 3 on 2", seen, pagesSeen)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func jsonString(v any) string { b, _ := json.Marshal(v); return string(b) }
