package extensions

import (
	"fmt"
	"strings"
	"testing"
)

const bundleSHA = "4d1e3b6a0f5c2e7d9b8a6c4e2f0d1b3a5c7e9f1b3d5a7c9e1f3b5d7a9c1e3f5b"

// withAssets is a definition whose assets are the given JSON array, with
// one Ansible task on the first.
func withAssets(assets string) []byte {
	return []byte(`{
  "kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "test-ext", "label": "test-ext",
  "extensionType": "workflow", "vendor": "hostforge", "extensionVersion": "1.0.0", "icon": "x",
  "dependencies": {"controllerVersion": "7.0"}, "inputs": [], "outputs": [],
  "assets": ` + assets + `,
  "onAssetChange": [{"stage": "serverRegistered", "tasks": [{"label": "t", "taskType": "ExtensionTaskAnsible", "options": {"asset": "bundle", "playbook": "site.yml"}}]}]
}`)
}

// A bundle fetched by URL proves what it is: validation refuses one
// without a sha256, and one over plain http without allowHttp, naming the
// JSON path — not the run that would download it.
func TestValidateAssetDownloads(t *testing.T) {
	type want struct{ path, msg string }
	cases := []struct {
		name   string
		assets string
		want   []want // empty: valid
	}{
		{"https without sha256", `[{"name": "bundle", "assetType": "AnsibleBundle", "url": "https://repo.example.com/b.zip?token=t0k"}]`,
			[]want{{"$.assets[0].sha256", "missing"}, {"$.assets[0].sha256", "https://repo.example.com/b.zip"}}},
		{"a Bundle without sha256", `[{"name": "bundle", "assetType": "Bundle", "url": "HTTPS://repo.example.com/b.zip"}]`,
			[]want{{"$.assets[0].sha256", "missing"}}},
		{"plain http", `[{"name": "bundle", "assetType": "AnsibleBundle", "url": "http://repo.example.com/b.zip", "sha256": "` + bundleSHA + `"}]`,
			[]want{{"$.assets[0].url", "allowHttp"}}},
		{"plain http without sha256 either", `[{"name": "bundle", "assetType": "AnsibleBundle", "url": "http://repo.example.com/b.zip"}]`,
			[]want{{"$.assets[0].sha256", "missing"}, {"$.assets[0].url", "allowHttp"}}},
		{"allowHttp is a boolean", `[{"name": "bundle", "assetType": "AnsibleBundle", "url": "http://repo.example.com/b.zip", "sha256": "` + bundleSHA + `", "allowHttp": "yes"}]`,
			[]want{{"$.assets[0].allowHttp", "boolean"}}},
		{"https with sha256", `[{"name": "bundle", "assetType": "AnsibleBundle", "url": "https://repo.example.com/b.zip", "sha256": "` + bundleSHA + `"}]`, nil},
		{"http opted in", `[{"name": "bundle", "assetType": "AnsibleBundle", "url": "http://repo.lab.internal/b.zip", "sha256": "` + bundleSHA + `", "allowHttp": true}]`, nil},
		{"a local archive", `[{"name": "bundle", "assetType": "AnsibleBundle", "url": "bundles/b.zip"}]`, nil},
		{"a file URL", `[{"name": "bundle", "assetType": "AnsibleBundle", "url": "file:///srv/bundles/b.zip"}]`, nil},
		{"an image is the runtime's to pull", `[{"name": "bundle", "assetType": "AnsibleBundle", "url": "bundles/b"}, {"name": "ee", "assetType": "OciImage", "url": "https://repo.example.com/ee.tar.gz"}]`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x, ps := Parse(withAssets(c.assets), "test")
			errs := ps.Errors()
			if len(c.want) == 0 {
				if x == nil || len(errs) > 0 {
					t.Fatalf("refused: %v", errs)
				}
				return
			}
			if x != nil {
				t.Fatalf("accepted; want errors %v", c.want)
			}
			for _, w := range c.want {
				found := false
				for _, p := range errs {
					found = found || (p.Path == w.path && strings.Contains(p.Message, w.msg))
				}
				if !found {
					t.Errorf("no error at %s mentioning %q; got:\n%v", w.path, w.msg, errs)
				}
			}
			if s := fmt.Sprint(ps); strings.Contains(s, "t0k") {
				t.Errorf("the problems carry the URL's query: %s", s)
			}
		})
	}
}
