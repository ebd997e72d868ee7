package wiring

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/adapters/ansible"
	"github.com/hostforge/hostforge/extensions"
)

// The download caps and the playbook's settings are config keys: read
// from the samples, refused with the key's name and line when wrong.
func TestDownloadKeys(t *testing.T) {
	fw := goodConfig + ledgerSection + firmwareSample(t)
	c, err := Parse("lab.yaml", []byte(fw))
	if err != nil {
		t.Fatal(err)
	}
	if c.Firmware.ArtifactMaxBytes != 16<<30 {
		t.Errorf("firmware.artifact_max_bytes %d, want 16 GiB", c.Firmware.ArtifactMaxBytes)
	}
	ext := goodConfig + "extensions:\n  definitions: /etc/hostforge/extensions\n  asset_max_bytes: 64 MiB\n  ansible_env: [ANSIBLE_CONFIG=/etc/hostforge/ansible.cfg, ANSIBLE_FORKS=1]\n"
	c, err = Parse("lab.yaml", []byte(ext))
	if err != nil {
		t.Fatal(err)
	}
	if x := c.Extensions; x.AssetMaxBytes != 64<<20 || len(x.AnsibleEnv) != 2 {
		t.Errorf("extensions %+v", x)
	}
	bad := []struct{ doc, key string }{
		{strings.Replace(fw, "artifact_max_bytes: 16GiB", "artifact_max_bytes: 16GB", 1), "firmware.artifact_max_bytes"},
		{strings.Replace(ext, "asset_max_bytes: 64 MiB", "asset_max_bytes: 0", 1), "extensions.asset_max_bytes"},
		{strings.Replace(ext, "ANSIBLE_FORKS=1", "PGPASSWORD=x", 1), "extensions.ansible_env"},
		{strings.Replace(ext, "ANSIBLE_FORKS=1", "ANSIBLE_CONFIG=/other", 1), "extensions.ansible_env"},
		{strings.Replace(ext, "ANSIBLE_FORKS=1", "ANSIBLE_FORKS", 1), "extensions.ansible_env"},
	}
	for _, b := range bad {
		if _, err := Parse("lab.yaml", []byte(b.doc)); !ConfigInvalid.Is(err) || !strings.Contains(err.Error(), b.key) || !strings.Contains(err.Error(), "line") {
			t.Errorf("%s: err = %v; want CONFIG_INVALID naming the key and its line", b.key, err)
		}
	}
}

// The runners built from the section hold to its cap.
func TestExtensionRunnersTakeTheAssetCap(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "bundle.tgz")
	if err := os.WriteFile(big, make([]byte, 96<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	runners, closeRunners, err := ExtensionRunners(RunnerOptions{AssetCache: t.TempDir(), AssetMaxBytes: 64 << 10, AnsibleEnv: []string{"ANSIBLE_FORKS=1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer closeRunners()
	_, err = runners[extensions.TaskAnsible].Run(context.Background(), extensions.Request{Extension: "x", Task: "t", TaskType: extensions.TaskAnsible,
		Ansible: &extensions.AnsibleOptions{Asset: "b", Playbook: "site.yml"}, Assets: []extensions.Asset{{Name: "b", AssetType: "AnsibleBundle", URL: big}}})
	if !ansible.AssetTooLarge.Is(err) || !strings.Contains(err.Error(), "64 KiB") {
		t.Fatalf("a 96 KiB bundle under a 64 KiB cap: %v", err)
	}
	if _, _, err := ExtensionRunners(RunnerOptions{AnsibleEnv: []string{"HOME=/root"}}); !extensions.RunnerConfigInvalid.Is(err) {
		t.Errorf("ansible_env with HOME: %v", err)
	}
}
