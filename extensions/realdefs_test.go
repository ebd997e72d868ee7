package extensions

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/internal/realdata"
)

// realDefinitions are MetalSoft's public definitions (the shared test data)
// and what must become of each: load, or be refused for the reason the
// data's README notes (a JSON path and a part of the message).
var realDefinitions = []struct {
	file      string
	refusedAt string
	because   string
}{
	{"demo-workflow.json", "$.onAssetChange[0].stage", `"server Registered": did you mean "serverRegistered"`},
	{"demo-workflow__demo-workflow.json", "$.definition.onAssetChange[0].stage", `"server Registered": did you mean "serverRegistered"`},
	{"simple-ansible-workflow__extension.json", "$", "trailing comma"},
	{"examples__simple-ansible-workflow__extension.json", "$.definition.onAssetChange[0].tasks[0].options.asset", `"test_ansible" does not name an asset`},
	{"server-validation-workflow__extension.json", "", ""},
	{"dns-workflow__pdns-workflow-basic__extension.json", "$.definition.onAssetChange[0].stage", `"serverInstanceGroupCreateDNS" was removed`},
	{"dns-workflow__pdns-workflow-full-example__extension.json", "$.definition.onAssetChange[4].stage", `"serverInstanceDeleteDNS" was removed`},
	{"dns-workflow__pdns-workflow-full-example.json", "$.definition.onAssetChange[0].stage", `"ServerInstanceGroupCreateDNS" is a removed stage`},
	{"power-dns__extension.json", "", ""},
	{"infoblox-a-ptr__extension.json", "", ""},
	{"infoblox-extension__infoblox-extension-via-api.json", "", ""},
	{"infoblox-host-records__extension.json", "", ""},
	{"incus__extension.json", "", ""},
	{"redhat-openshift__extension.json", "", ""},
}

// MetalSoft's definitions name their bundles by https URL without a
// sha256 (hostforge's addition): as published, each that is otherwise
// valid is refused for that alone, at every downloaded bundle's sha256,
// and loads once its bundles' digests are given.
func TestRealDefinitions(t *testing.T) {
	for _, c := range realDefinitions {
		t.Run(c.file, func(t *testing.T) {
			published := realdata.Read(t, "extensions", "metalsoft", c.file)
			x, ps := Parse(published, c.file)
			if c.refusedAt == "" {
				if x != nil {
					t.Fatal("loaded, although its bundles are downloaded without a sha256")
				}
				for _, p := range ps.Errors() {
					if !strings.HasSuffix(p.Path, ".sha256") || !strings.Contains(p.Message, "missing: the bundle at https://repo.metalsoft.io/") {
						t.Errorf("refused for another reason than the digest: %v", p)
					}
				}
				if x, ps = Parse(withBundleDigests(t, published), c.file); x == nil {
					t.Fatalf("refused with its bundles' digests: %v", ps.Errors())
				}
				return
			}
			if x != nil {
				t.Fatal("loaded; the data's README says it is broken")
			}
			for _, p := range ps.Errors() {
				if p.Path == c.refusedAt && strings.Contains(p.Message, c.because) {
					return
				}
			}
			t.Fatalf("not refused at %s for %q; problems:\n%v", c.refusedAt, c.because, ps)
		})
	}
}

// The real definitions that load bind what their files say.
func TestRealDefinitionsBindTheirStages(t *testing.T) {
	x, _ := Parse(withBundleDigests(t, realdata.Read(t, "extensions", "metalsoft", "infoblox-a-ptr__extension.json")), "infoblox")
	if x == nil {
		t.Fatal("infoblox-a-ptr does not load")
	}
	want := map[Stage]string{ServerInstanceUpdate: "update-ip-records-for-instance", ClusterUpdateDNS: "update-dns-records-for-cluster", SwitchDeleteDNS: "delete-dns-and-ptr-records-for-switch"}
	for s, label := range want {
		ts := x.Tasks(s)
		if len(ts) != 1 || ts[0].Label != label || ts[0].Ansible() == nil || ts[0].Ansible().Asset != "infoblox-configuration" {
			t.Errorf("%s: tasks %+v, want one Ansible task %s", s, ts, label)
		}
	}
	if n := len(x.Tasks(ServerRegisteredStage)); n != 0 {
		t.Errorf("serverRegistered has %d tasks, want none", n)
	}
}

// withBundleDigests gives every bundle a definition downloads (an http(s)
// url, not an OciImage) a sha256, as a site declaring it would.
func withBundleDigests(t *testing.T, b []byte) []byte {
	t.Helper()
	var root map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&root); err != nil {
		t.Fatal(err)
	}
	def := root
	if inner, ok := root["definition"].(map[string]any); ok {
		def = inner
	}
	assets, _ := def["assets"].([]any)
	for _, a := range assets {
		a, _ := a.(map[string]any)
		u, _ := a["url"].(string)
		if a["assetType"] != "OciImage" && (strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) {
			a["sha256"] = strings.Repeat("5a", 32)
		}
	}
	out, err := json.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
