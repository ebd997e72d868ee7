package ansible_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/adapters/ansible"
	"github.com/hostforge/hostforge/adapters/ansible/ansibletest"
	"github.com/hostforge/hostforge/extensions"
)

// Secrets planted in the worker's environment, which a playbook must not
// read.
const (
	plantedPG    = "Pg-Planted-Secret-41"
	plantedToken = "Nb-Planted-Token-42"
)

// envDump is a stand-in ansible-playbook that prints its environment.
func envDump(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ansible-playbook")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nenv\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// ansible-playbook runs with PATH, HOME, LANG, the runner's ANSIBLE_*
// settings and the site's, and nothing else of the worker's environment.
func TestPlaybookGetsAMinimalEnvironment(t *testing.T) {
	t.Setenv("PGPASSWORD", plantedPG)
	t.Setenv("HOSTFORGE_NETBOX_TOKEN", plantedToken)
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("ANSIBLE_BECOME_PASS", "worker-level-ansible-setting")
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "site.yml"), []byte(ansibletest.Playbook), 0o644)
	r, err := ansible.New(ansible.Config{Playbooks: ansible.Exec{Path: envDump(t)}, CacheDir: t.TempDir(), WorkDir: t.TempDir(),
		Env: map[string]string{"ANSIBLE_CONFIG": "/etc/hostforge/ansible.cfg"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(context.Background(), request(dir, "", extensions.AnsibleOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(res.Message, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && k != "" && !strings.Contains(k, " ") {
			got[k] = v
		}
	}
	want := map[string]string{"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME"), "LANG": "C.UTF-8",
		"ANSIBLE_CONFIG": "/etc/hostforge/ansible.cfg", "ANSIBLE_NOCOLOR": "1"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("the playbook's %s is %q, want %q", k, got[k], v)
		}
	}
	allowed := map[string]bool{"PATH": true, "HOME": true, "LANG": true, "PWD": true, "SHLVL": true, "_": true, "PYTHONUNBUFFERED": true}
	for k := range got {
		if !allowed[k] && !(strings.HasPrefix(k, "ANSIBLE_") && k != "ANSIBLE_BECOME_PASS") {
			t.Errorf("the playbook's environment carries the worker's %s", k)
		}
	}
	if strings.Contains(res.Message, plantedPG) || strings.Contains(res.Message, plantedToken) {
		t.Errorf("a planted secret reached the playbook:\n%s", res.Message)
	}
}

// A site setting outside ANSIBLE_* is refused: the config names Ansible's
// settings, not a way back in for the worker's environment.
func TestSiteEnvIsAnsibleSettingsOnly(t *testing.T) {
	for _, name := range []string{"PGPASSWORD", "ansible_config", "ANSIBLE_", "ANSIBLE_X=Y", "LD_PRELOAD"} {
		_, err := ansible.New(ansible.Config{Playbooks: &ansibletest.Fake{}, CacheDir: t.TempDir(), Env: map[string]string{name: "x"}})
		if !extensions.RunnerConfigInvalid.Is(err) || !strings.Contains(err.Error(), "ANSIBLE_") {
			t.Errorf("Env %q: error %v, want EXTENSION_RUNNER_CONFIG_INVALID", name, err)
		}
	}
}
