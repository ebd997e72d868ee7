package extensions

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// definition builds a definition with one bundle asset named "bundle"
// (label "bundle-label") around the given onAssetChange entries.
func definition(onAssetChange string) []byte {
	return []byte(fmt.Sprintf(`{
  "kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "test-ext", "label": "test-ext",
  "extensionType": "workflow", "vendor": "hostforge", "extensionVersion": "1.0.0", "icon": "x",
  "dependencies": {"controllerVersion": "7.0"}, "inputs": [], "outputs": [],
  "assets": [{"label": "bundle-label", "name": "bundle", "assetType": "AnsibleBundle", "url": "https://example.com/b.zip", "sha256": "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1"}],
  "onAssetChange": [%s]
}`, onAssetChange))
}

func webhookTask(label, tpl string) string {
	return fmt.Sprintf(`{"label": %q, "taskType": "ExtensionTaskWebhook", "options": {"endpoint": "https://hooks.example.com/in", "method": "POST", "requestTemplate": %q}}`, label, tpl)
}

func sshTask(label, cmd string) string {
	return fmt.Sprintf(`{"label": %q, "taskType": "ExtensionTaskSsh", "options": {"host": "10.0.0.1", "port": 22, "timeout": 30, "username": "ops", "commandTemplate": %q}}`, label, cmd)
}

func ansibleTask(label string) string {
	return fmt.Sprintf(`{"label": %q, "taskType": "ExtensionTaskAnsible", "options": {"asset": "bundle", "playbook": "site.yml"}}`, label)
}

func stage(name string, tasks ...string) string {
	return fmt.Sprintf(`{"stage": %q, "tasks": [%s]}`, name, strings.Join(tasks, ","))
}

func mustParse(t testing.TB, b []byte) *Extension {
	t.Helper()
	x, ps := Parse(b, "test")
	if x == nil {
		t.Fatalf("definition does not validate: %v", ps)
	}
	return x
}

func specPayload(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "payloads", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
