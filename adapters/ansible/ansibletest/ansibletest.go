// Package ansibletest holds the contract every ansible.Playbooks passes —
// the real ansible-playbook (ansible.Exec, in the integration suite) and
// Fake, the in-process one the unit suite runs — and Fake itself.
//
//	ansibletest.Run(t, func(t *testing.T) ansible.Playbooks { return &ansibletest.Fake{} })
//
// The contract's playbooks are real ones: the same YAML runs on both.
package ansibletest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/ansible"
	"github.com/hostforge/hostforge/internal/syncbuf"
)

// Inventory is the inventory the contract's runs get: localhost, run
// locally, as the runner's.
const Inventory = `all:
  hosts:
    localhost:
      ansible_connection: local
      ansible_python_interpreter: "{{ ansible_playbook_python }}"
`

// Vars are the contract's extra-vars: a serverRegistered payload's keys
// at top level, as the runner writes them.
const Vars = `{"server": {"serialNumber": "6SBT0R3", "model": "PowerEdge R450", "ramGbytes": 32}, "configVars": {"zone": "dc1"}, "hostforge_delivery_id": "0d7c9d4c-0b5c-8a0e-b6e3-1b96a2cda7c2"}`

// Playbook writes the extension's outputs at context_json_file_path, as
// MetalSoft's playbooks do, after printing a variable.
const Playbook = `- name: register
  hosts: localhost
  gather_facts: false
  tasks:
    - name: say what is registered
      ansible.builtin.debug:
        msg: "registering {{ server.model }} in {{ configVars.zone }}"
    - name: write the outputs
      ansible.builtin.copy:
        content: "{{ {'serial': server.serialNumber, 'ram': server.ramGbytes, 'delivery': hostforge_delivery_id} | to_json }}"
        dest: "{{ context_json_file_path }}"
`

// invocation writes a run's files (a playbook, the inventory, the
// extra-vars with context_json_file_path) into a fresh directory.
func invocation(t *testing.T, playbook string) (ansible.Invocation, string, *syncbuf.Buffer) {
	t.Helper()
	dir := t.TempDir()
	ctxPath := filepath.Join(dir, ".hostforge", "context.json")
	var vars map[string]any
	if err := json.Unmarshal([]byte(Vars), &vars); err != nil {
		t.Fatal(err)
	}
	vars["context_json_file_path"] = ctxPath
	vb, _ := json.Marshal(vars)
	for name, data := range map[string][]byte{"inventory.yml": []byte(Inventory), "variables.json": vb, "site.yml": []byte(playbook)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".hostforge"), 0o700); err != nil {
		t.Fatal(err)
	}
	out := &syncbuf.Buffer{}
	return ansible.Invocation{Dir: dir, Playbook: "site.yml", Inventory: "inventory.yml", ExtraVars: "variables.json", Output: out,
		Env: []string{"ANSIBLE_NOCOLOR=1", "ANSIBLE_RETRY_FILES_ENABLED=0", "ANSIBLE_LOCAL_TEMP=" + filepath.Join(dir, ".tmp")}}, ctxPath, out
}

// Run is the contract of an ansible.Playbooks: newPlaybooks returns the
// implementation under test.
func Run(t *testing.T, newPlaybooks func(t *testing.T) ansible.Playbooks) {
	t.Run("variables at top level, outputs at context_json_file_path", func(t *testing.T) {
		inv, ctxPath, out := invocation(t, Playbook)
		exit, err := newPlaybooks(t).Play(context.Background(), inv)
		if err != nil || exit != 0 {
			t.Fatalf("exit %d, error %v; output:\n%s", exit, err, out)
		}
		if !strings.Contains(out.String(), "registering PowerEdge R450 in dc1") {
			t.Errorf("the payload's keys and configVars are not variables at top level; output:\n%s", out)
		}
		b, err := os.ReadFile(ctxPath)
		if err != nil {
			t.Fatalf("no context JSON: %v", err)
		}
		var got struct {
			Serial   string `json:"serial"`
			RAM      int    `json:"ram"`
			Delivery string `json:"delivery"`
		}
		if err := json.Unmarshal(b, &got); err != nil || got.Serial != "6SBT0R3" || got.RAM != 32 || got.Delivery == "" {
			t.Errorf("context JSON %s (%v)", b, err)
		}
	})
	t.Run("a failed task exits 2", func(t *testing.T) {
		inv, _, out := invocation(t, `- hosts: localhost
  gather_facts: false
  tasks:
    - name: refuse
      ansible.builtin.fail:
        msg: "refused {{ server.serialNumber }}"
    - name: never reached
      ansible.builtin.debug:
        msg: "after the failure"
`)
		exit, err := newPlaybooks(t).Play(context.Background(), inv)
		if err != nil || exit != 2 {
			t.Fatalf("exit %d, error %v, want exit 2; output:\n%s", exit, err, out)
		}
		if !strings.Contains(out.String(), "refused 6SBT0R3") || strings.Contains(out.String(), "after the failure") {
			t.Errorf("output:\n%s", out)
		}
	})
	t.Run("an undefined variable fails", func(t *testing.T) {
		inv, _, out := invocation(t, `- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.debug:
        msg: "{{ server.no_such_field }}"
`)
		exit, err := newPlaybooks(t).Play(context.Background(), inv)
		if err != nil || exit == 0 {
			t.Fatalf("exit %d, error %v, want a failure; output:\n%s", exit, err, out)
		}
	})
	t.Run("a missing playbook exits 1", func(t *testing.T) {
		inv, _, out := invocation(t, "")
		inv.Playbook = "nope.yml"
		exit, err := newPlaybooks(t).Play(context.Background(), inv)
		if err != nil || exit != 1 || !strings.Contains(out.String(), "could not be found") {
			t.Fatalf("exit %d, error %v, want 1 saying it could not be found; output:\n%s", exit, err, out)
		}
	})
	t.Run("the context ending kills the run", func(t *testing.T) {
		inv, _, out := invocation(t, `- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.pause:
        seconds: 60
`)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		begin := time.Now()
		_, err := newPlaybooks(t).Play(ctx, inv)
		if err == nil || ctx.Err() == nil {
			t.Fatalf("error %v: want the context's error; output:\n%s", err, out)
		}
		if d := time.Since(begin); d > 10*time.Second {
			t.Errorf("returned %s after the start: the run must be killed when the context ends", d)
		}
	})
}
