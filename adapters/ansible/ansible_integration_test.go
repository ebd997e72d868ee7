//go:build integration

package ansible_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/adapters/ansible"
	"github.com/hostforge/hostforge/adapters/ansible/ansibletest"
	"github.com/hostforge/hostforge/adapters/sqlstore/sqlstoretest"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/internal/itenv"
)

// needAnsible returns the real ansible-playbook that
// scripts/integration.d/ansible.sh installed (Debian's ansible-core).
func needAnsible(t *testing.T) ansible.Exec {
	t.Helper()
	p := itenv.Var(t, "HOSTFORGE_ANSIBLE_PLAYBOOK", "scripts/integration.d/ansible.sh did not install ansible-core")
	return ansible.Exec{Path: p}
}

func TestRealAnsiblePlaybookPassesTheContract(t *testing.T) {
	exec := needAnsible(t)
	ansibletest.Run(t, func(*testing.T) ansible.Playbooks { return exec })
}

// TestRealPlaybookOutputsAreStored fires a serverRegistered event whose
// Ansible task runs a zip bundle on the real ansible-playbook: the outputs
// its playbook writes at context_json_file_path are stored, on every
// engine, and a second run that writes none replaces them with {}.
func TestRealPlaybookOutputsAreStored(t *testing.T) {
	exec := needAnsible(t)
	defs := t.TempDir()
	bundle := zipOf(t, entry{name: "inventory-bundle/"}, entry{name: "inventory-bundle/site.yml", body: ansibletest.Playbook},
		entry{name: "inventory-bundle/quiet.yml", body: "- hosts: localhost\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug:\n        msg: nothing to report\n"})
	if err := os.WriteFile(filepath.Join(defs, "bundle.zip"), bundle, 0o644); err != nil {
		t.Fatal(err)
	}
	def := func(playbook string) []byte {
		return []byte(`{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "inventory", "label": "inventory",
 "extensionType": "workflow", "vendor": "hostforge", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [],
 "configVars": [{"label": "Zone", "name": "zone", "inputType": "ExtensionInputString", "defaultValue": "dc1"}],
 "assets": [{"label": "Bundle", "name": "bundle", "assetType": "AnsibleBundle", "url": "bundle.zip", "sha256": "` + digest(bundle) + `"}],
 "onAssetChange": [{"stage": "serverRegistered", "tasks": [
   {"label": "register", "taskType": "ExtensionTaskAnsible", "options": {"asset": "bundle", "playbook": "` + playbook + `", "executionTimeout": 300, "executionTimeoutTick": 5}}]}]}`)
	}
	for _, eng := range sqlstoretest.Engines(t) {
		t.Run(string(eng.Driver), func(t *testing.T) {
			store := eng.Open(t).Extensions()
			runner, err := ansible.New(ansible.Config{Playbooks: exec, CacheDir: t.TempDir(), WorkDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			// Each firing is a new event (a fresh ID): the same event fired
			// again would skip the task that succeeded.
			fire := func(playbook string) extensions.Report {
				ev, _, err := extensions.NewEvent("", extensions.ServerRegisteredStage, []byte(`{"server": {"serialNumber": "6SBT0R3", "model": "PowerEdge R450", "ramGbytes": 32}}`))
				if err != nil {
					t.Fatal(err)
				}
				x, ps := extensions.Parse(def(playbook), filepath.Join(defs, "inventory.json"))
				if x == nil {
					t.Fatal(ps)
				}
				reg, _ := extensions.NewRegistry(x)
				d := extensions.NewDispatcher(reg, map[extensions.TaskType]extensions.Runner{extensions.TaskAnsible: runner}, store)
				rep, err := extensions.Fire(context.Background(), d.Local(clock.Real{}), ev)
				if err != nil {
					t.Fatal(err)
				}
				return rep
			}
			rep := fire("site.yml")
			if len(rep.Deliveries) != 1 || rep.Deliveries[0].Status != extensions.StatusSucceeded {
				t.Fatalf("report %+v", rep)
			}
			out, ok, err := store.Outputs(context.Background(), "inventory")
			if err != nil || !ok {
				t.Fatalf("no stored outputs (%v)", err)
			}
			var got map[string]any
			if err := json.Unmarshal(out.Values, &got); err != nil || got["serial"] != "6SBT0R3" || got["delivery"] != rep.Deliveries[0].DeliveryID {
				t.Errorf("stored outputs %s (%v)", out.Values, err)
			}
			rec, _, _ := store.Execution(context.Background(), rep.Deliveries[0].DeliveryID)
			if rec.Status != extensions.StatusSucceeded || string(rec.Outputs) != string(out.Values) {
				t.Errorf("execution record %+v", rec)
			}

			// MetalSoft replaces outputs on every run: one that writes none wipes them.
			if rep := fire("quiet.yml"); rep.Deliveries[0].Status != extensions.StatusSucceeded {
				t.Fatalf("second run: %+v", rep)
			}
			out, _, _ = store.Outputs(context.Background(), "inventory")
			if string(out.Values) != "{}" {
				t.Errorf("outputs after a run that wrote none: %s, want {}", out.Values)
			}
		})
	}
}

// TestRealPlaybookSeesNoWorkerSecrets plants a database password and a
// NetBox token in the worker's environment, as a worker holds them, and
// runs a playbook that reads every variable it can: the real
// ansible-playbook sees PATH, HOME, LANG and the ANSIBLE_* settings, and
// neither secret.
func TestRealPlaybookSeesNoWorkerSecrets(t *testing.T) {
	exec := needAnsible(t)
	t.Setenv("PGPASSWORD", plantedPG)
	t.Setenv("HOSTFORGE_NETBOX_TOKEN", plantedToken)
	dir := t.TempDir()
	playbook := `- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.copy:
        content: "{{ {'pg': lookup('env', 'PGPASSWORD'), 'token': lookup('env', 'HOSTFORGE_NETBOX_TOKEN'),
                      'path': lookup('env', 'PATH'), 'hostkeys': lookup('env', 'ANSIBLE_HOST_KEY_CHECKING')} | to_json }}"
        dest: "{{ context_json_file_path }}"
`
	if err := os.WriteFile(filepath.Join(dir, "site.yml"), []byte(playbook), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ansible.New(ansible.Config{Playbooks: exec, CacheDir: t.TempDir(), WorkDir: t.TempDir(),
		Env: map[string]string{"ANSIBLE_HOST_KEY_CHECKING": "True"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(context.Background(), request(dir, "", extensions.AnsibleOptions{ExecutionTimeout: 300}))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		PG, Token, Path, HostKeys string
	}
	if err := json.Unmarshal(res.Outputs, &got); err != nil {
		t.Fatalf("outputs %s: %v", res.Outputs, err)
	}
	if got.PG != "" || got.Token != "" || strings.Contains(string(res.Outputs), plantedPG) || strings.Contains(string(res.Outputs), plantedToken) {
		t.Errorf("the playbook read the worker's secrets: %s", res.Outputs)
	}
	if got.Path != os.Getenv("PATH") || got.HostKeys != "True" {
		t.Errorf("the playbook's PATH %q and ANSIBLE_HOST_KEY_CHECKING %q, want the worker's PATH and the site's setting", got.Path, got.HostKeys)
	}
}
