package ansible_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/ansible"
	"github.com/hostforge/hostforge/adapters/ansible/ansibletest"
	"github.com/hostforge/hostforge/extensions"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFakePassesTheContract(t *testing.T) {
	ansibletest.Run(t, func(*testing.T) ansible.Playbooks { return &ansibletest.Fake{} })
}

// entry is one file of a test archive; a link when link is set.
type entry struct {
	name, body, link string
	mode             int64
}

func zipOf(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		mode := os.FileMode(0o644)
		if e.mode != 0 {
			mode = os.FileMode(e.mode)
		}
		if e.link != "" {
			mode = os.ModeSymlink | 0o777
		}
		if strings.HasSuffix(e.name, "/") {
			mode = os.ModeDir | 0o755
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		body := e.body
		if e.link != "" {
			body = e.link
		}
		_, _ = w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func tgzOf(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: tar.TypeReg}
		switch {
		case e.link != "":
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, e.link, 0
		case strings.HasSuffix(e.name, "/"):
			h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o755, 0
		}
		if e.mode != 0 {
			h.Mode = e.mode
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write([]byte(e.body))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	_ = gz.Close()
	return b.Bytes()
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// fixture is a runner on the fake ansible-playbook with its own cache.
type fixture struct {
	fake   *ansibletest.Fake
	runner *ansible.Runner
	cache  string
	work   string
}

func newFixture(t *testing.T, runtime string) *fixture {
	t.Helper()
	f := &fixture{fake: &ansibletest.Fake{}, cache: t.TempDir(), work: t.TempDir()}
	r, err := ansible.New(ansible.Config{Playbooks: f.fake, CacheDir: f.cache, WorkDir: f.work, ContainerRuntime: runtime})
	if err != nil {
		t.Fatal(err)
	}
	f.runner = r
	return f
}

// newTLSFixture is a fixture whose downloads trust client's roots.
func newTLSFixture(t *testing.T, client *http.Client) *fixture {
	t.Helper()
	f := &fixture{fake: &ansibletest.Fake{}, cache: t.TempDir(), work: t.TempDir()}
	r, err := ansible.New(ansible.Config{Playbooks: f.fake, CacheDir: f.cache, WorkDir: f.work, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	f.runner = r
	return f
}

// request is an Ansible task of the extension "inventory" whose bundle
// asset has url and sha.
func request(url, sha string, o extensions.AnsibleOptions) extensions.Request {
	if o.Asset == "" {
		o.Asset = "bundle"
	}
	if o.Playbook == "" {
		o.Playbook = "site.yml"
	}
	return extensions.Request{
		DeliveryID: extensions.DeliveryID("evt-1", "inventory", "register"), EventID: "evt-1", Stage: extensions.ServerRegisteredStage,
		Extension: "inventory", Task: "register", TaskType: extensions.TaskAnsible, Ansible: &o,
		Assets: []extensions.Asset{
			{Label: "Bundle", Name: "bundle", AssetType: "AnsibleBundle", URL: url, SHA256: sha},
			{Label: "EE", Name: "ee-image", AssetType: "OciImage", URL: "docker://registry.example.com/ansible/ee:2.14"},
		},
		Variables: json.RawMessage(`{"server": {"serialNumber": "6SBT0R3", "model": "PowerEdge R450", "ramGbytes": 32}, "configVars": {"zone": "dc1"}}`),
	}
}

func TestRunWritesOutputsFromAZipNextToTheDefinition(t *testing.T) {
	f := newFixture(t, "")
	defs := t.TempDir()
	archive := zipOf(t, entry{name: "site.yml", body: ansibletest.Playbook}, entry{name: "roles/README", body: "roles"})
	if err := os.WriteFile(filepath.Join(defs, "bundle.zip"), archive, 0o644); err != nil {
		t.Fatal(err)
	}
	req := request("bundle.zip", "", extensions.AnsibleOptions{ExecutionTimeout: 60})
	req.Source = filepath.Join(defs, "inventory.json")
	res, err := f.runner.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(res.Outputs, &got); err != nil || got["serial"] != "6SBT0R3" || got["delivery"] != req.DeliveryID {
		t.Fatalf("outputs %s (%v): want the context JSON the playbook wrote", res.Outputs, err)
	}
	if !strings.Contains(res.Message, "ansible-playbook site.yml exited 0") || !strings.Contains(res.Message, "registering PowerEdge R450 in dc1") {
		t.Errorf("message %q", res.Message)
	}
	inv := f.fake.Invocations()[0]
	if inv.Inventory != "inventory.yml" || inv.ExtraVars != "variables.json" || inv.Playbook != "site.yml" || inv.Container != nil {
		t.Errorf("invocation %+v: want ansible-playbook -i inventory.yml site.yml -e @variables.json", inv)
	}
	if _, err := os.Stat(inv.Dir); !os.IsNotExist(err) {
		t.Errorf("the run's directory (with variables.json) is left behind: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.cache, digest(archive), "site.yml")); err != nil {
		t.Errorf("the bundle is not cached under its digest: %v", err)
	}
}

func TestBundlesFromURLsAreVerifiedAndCachedByDigest(t *testing.T) {
	archive := tgzOf(t, entry{name: "register-bundle/"}, entry{name: "register-bundle/site.yml", body: ansibletest.Playbook})
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path != "/bundles/register-1.tgz" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(archive)
	}))
	defer srv.Close()
	f := newTLSFixture(t, srv.Client())
	url := srv.URL + "/bundles/register-1.tgz?token=sekrit"

	for i := range 2 {
		res, err := f.runner.Run(context.Background(), request(url, digest(archive), extensions.AnsibleOptions{}))
		if err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		if !bytes.Contains(res.Outputs, []byte(`"serial":"6SBT0R3"`)) {
			t.Errorf("run %d: outputs %s", i+1, res.Outputs)
		}
	}
	if hits.Load() != 1 {
		t.Errorf("%d downloads: a bundle with a sha256 found in the cache is not fetched again", hits.Load())
	}

	tests := []struct {
		name, url, sha string
		code           string
		msg            string
	}{
		{"digest mismatch", srv.URL + "/bundles/register-1.tgz", strings.Repeat("0", 64), ansible.AssetInvalid.Code, "has SHA-256 " + digest(archive)},
		{"not found", srv.URL + "/bundles/missing.tgz?token=sekrit", digest(archive), ansible.AssetUnavailable.Code, "404 Not Found"},
		{"bad sha256", srv.URL + "/bundles/register-1.tgz", "xyz", ansible.AssetInvalid.Code, "not a SHA-256"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newTLSFixture(t, srv.Client()).runner.Run(context.Background(), request(tc.url, tc.sha, extensions.AnsibleOptions{}))
			if hostforge.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %v, want %s saying %q", err, tc.code, tc.msg)
			}
			if strings.Contains(err.Error(), "sekrit") {
				t.Errorf("the URL's query reached the message: %v", err)
			}
		})
	}
}

func TestOutcomes(t *testing.T) {
	pb := func(tasks string) string {
		return "- hosts: localhost\n  gather_facts: false\n  tasks:\n" + tasks
	}
	tests := []struct {
		name     string
		playbook string
		o        extensions.AnsibleOptions
		runtime  string
		code     string
		msg      string
		outputs  string
	}{
		{"no outputs written wipes them", pb("    - ansible.builtin.debug:\n        msg: hello\n"), extensions.AnsibleOptions{}, "", "", "", `{}`},
		{"a failed task", pb("    - ansible.builtin.fail:\n        msg: \"no rack for {{ server.serialNumber }}\"\n"), extensions.AnsibleOptions{}, "", ansible.PlaybookFailed.Code, "exited 2", ""},
		{"outputs that are not an object", pb("    - ansible.builtin.copy:\n        content: '[1, 2]'\n        dest: \"{{ context_json_file_path }}\"\n"), extensions.AnsibleOptions{}, "", ansible.OutputsInvalid.Code, "not an object", ""},
		{"outputs that are not JSON", pb("    - ansible.builtin.copy:\n        content: 'serial=1'\n        dest: \"{{ context_json_file_path }}\"\n"), extensions.AnsibleOptions{}, "", ansible.OutputsInvalid.Code, "not JSON", ""},
		{"killed at executionTimeout", pb("    - ansible.builtin.pause:\n        seconds: 30\n"), extensions.AnsibleOptions{ExecutionTimeout: 1}, "", extensions.TaskTimeout.Code, "did not finish within its executionTimeout of 1s", ""},
		{"a playbook not in the bundle", "", extensions.AnsibleOptions{Playbook: "other.yml"}, "", ansible.AssetInvalid.Code, "other.yml is not in the bundle", ""},
		{"a playbook outside the bundle", "", extensions.AnsibleOptions{Playbook: "../site.yml"}, "", ansible.AssetInvalid.Code, "not a path inside the bundle", ""},
		{"ee without a container runtime", ansibletest.Playbook, extensions.AnsibleOptions{EE: "ee-image"}, "", extensions.RunnerConfigInvalid.Code, "extensions.container_runtime", ""},
		{"ee naming no image", ansibletest.Playbook, extensions.AnsibleOptions{EE: "bundle"}, "podman", ansible.AssetInvalid.Code, "not an OciImage", ""},
		{"an asset that is not a bundle", ansibletest.Playbook, extensions.AnsibleOptions{Asset: "ee-image"}, "", ansible.AssetInvalid.Code, "not a Bundle or AnsibleBundle", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.playbook != "" {
				_ = os.WriteFile(filepath.Join(dir, "site.yml"), []byte(tc.playbook), 0o644)
			}
			f := newFixture(t, tc.runtime)
			res, err := f.runner.Run(context.Background(), request(dir, "", tc.o))
			if got := hostforge.CodeOf(err); got != tc.code || (err != nil && !strings.Contains(err.Error(), tc.msg)) {
				t.Fatalf("error %v, want %q saying %q", err, tc.code, tc.msg)
			}
			if tc.code == "" && string(res.Outputs) != tc.outputs {
				t.Errorf("outputs %s, want %s", res.Outputs, tc.outputs)
			}
		})
	}
}

// A failed playbook's output is the record's detail, never the error's
// text (which log lines carry); a task that receives secrets keeps it only
// by SHA-256 and length, since a play may print its extra-vars.
func TestPlaybookOutputIsDetailAndDigestWithSecrets(t *testing.T) {
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "site.yml"), []byte("- hosts: localhost\n  gather_facts: false\n  tasks:\n    - ansible.builtin.fail:\n        msg: \"no rack for {{ server.serialNumber }}\"\n"), 0o644)
	f := newFixture(t, "")
	for _, secrets := range []bool{false, true} {
		req := request(dir, "", extensions.AnsibleOptions{})
		req.IncludesSecrets = secrets
		_, err := f.runner.Run(context.Background(), req)
		fl, ok := hostforge.AsFailure(err)
		if !ok || !ansible.PlaybookFailed.Is(err) || strings.Contains(err.Error(), "no rack") || !strings.Contains(err.Error(), "exited 2") {
			t.Fatalf("secrets %v: error %v", secrets, err)
		}
		if has := strings.Contains(fl.Detail, "no rack for 6SBT0R3"); has == secrets {
			t.Errorf("secrets %v: detail %q", secrets, fl.Detail)
		}
		if secrets && !strings.Contains(fl.Detail, "output: sha256:") {
			t.Errorf("the output of a task that receives secrets is kept by its digest: %q", fl.Detail)
		}
	}
}

func TestExecutionEnvironmentRunsInAContainer(t *testing.T) {
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "site.yml"), []byte(ansibletest.Playbook), 0o644)
	f := newFixture(t, "podman")
	res, err := f.runner.Run(context.Background(), request(dir, "", extensions.AnsibleOptions{EE: "ee-image"}))
	if err != nil {
		t.Fatal(err)
	}
	inv := f.fake.Invocations()[0]
	if inv.Container == nil || inv.Container.Runtime != "podman" || inv.Container.Image != "registry.example.com/ansible/ee:2.14" || inv.Container.Name == "" {
		t.Fatalf("container %+v", inv.Container)
	}
	if !bytes.Contains(res.Outputs, []byte(`"serial":"6SBT0R3"`)) {
		t.Errorf("outputs %s: the context path is the container's, mapped to the run's directory", res.Outputs)
	}
}

func TestVariables(t *testing.T) {
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "site.yml"), []byte(ansibletest.Playbook), 0o644)
	var vars map[string]any
	fake := playbooksFunc(func(ctx context.Context, inv ansible.Invocation) (int, error) {
		b, err := os.ReadFile(filepath.Join(inv.Dir, inv.ExtraVars))
		if err != nil {
			t.Error(err)
		}
		st, _ := os.Stat(filepath.Join(inv.Dir, inv.ExtraVars))
		if st != nil && st.Mode().Perm() != 0o600 {
			t.Errorf("variables.json has mode %v, want 0600 (it may hold the payload's secrets)", st.Mode().Perm())
		}
		_ = json.Unmarshal(b, &vars)
		return 0, nil
	})
	r, err := ansible.New(ansible.Config{Playbooks: fake, CacheDir: t.TempDir(), WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	req := request(dir, "", extensions.AnsibleOptions{})
	if _, err := r.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"server", "configVars", "context_json_file_path", "hostforge_delivery_id", "hostforge_event_id", "hostforge_stage", "hostforge_extension", "hostforge_task"} {
		if _, ok := vars[k]; !ok {
			t.Errorf("extra-vars lack %s: %v", k, vars)
		}
	}
	if vars["hostforge_delivery_id"] != req.DeliveryID {
		t.Errorf("hostforge_delivery_id %v, want %s", vars["hostforge_delivery_id"], req.DeliveryID)
	}
}

type playbooksFunc func(ctx context.Context, inv ansible.Invocation) (int, error)

func (f playbooksFunc) Play(ctx context.Context, inv ansible.Invocation) (int, error) {
	return f(ctx, inv)
}

func TestUnpackRefusesUnsafeArchives(t *testing.T) {
	tests := []struct {
		name    string
		archive []byte
		want    string
	}{
		{"zip slip", zipOf(t, entry{name: "../evil.sh", body: "x"}), "escapes the bundle"},
		{"absolute path", tgzOf(t, entry{name: "/etc/evil", body: "x"}), "escapes the bundle"},
		{"link out", tgzOf(t, entry{name: "out", link: "../../etc"}), "points outside the bundle"},
		{"absolute link", zipOf(t, entry{name: "out", link: "/etc/passwd"}), "absolute path"},
		{"write through a link", tgzOf(t, entry{name: "d/", body: ""}, entry{name: "d/l", link: "."}, entry{name: "d/l/f", body: "x"}), "below the symbolic link"},
		{"not an archive", []byte("just some text"), "not a zip or tar.gz"},
		{"truncated gzip", tgzOf(t, entry{name: "a", body: strings.Repeat("a", 5000)})[:40], "not a readable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "root")
			_ = os.Mkdir(root, 0o755)
			err := ansible.Unpack(bytes.NewReader(tc.archive), int64(len(tc.archive)), root)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "evil.sh")); err == nil {
				t.Error("a file was written outside the root")
			}
		})
	}
	good := tgzOf(t, entry{name: "bin/", body: ""}, entry{name: "bin/run.sh", body: "#!/bin/sh\n", mode: 0o4755}, entry{name: "link", link: "bin/run.sh"})
	root := t.TempDir()
	if err := ansible.Unpack(bytes.NewReader(good), int64(len(good)), root); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(root, "link"))
	if err != nil || st.Mode().Perm() != 0o755 || st.Mode()&os.ModeSetuid != 0 {
		t.Errorf("unpacked %v (%v): want the link to the file, mode 0755 without setuid", st.Mode(), err)
	}
}

func TestMissingAnsiblePlaybook(t *testing.T) {
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "site.yml"), []byte(ansibletest.Playbook), 0o644)
	r, err := ansible.New(ansible.Config{Playbooks: ansible.Exec{Path: filepath.Join(dir, "no-ansible-playbook")}, CacheDir: t.TempDir(), WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Run(context.Background(), request(dir, "", extensions.AnsibleOptions{}))
	if !extensions.RunnerConfigInvalid.Is(err) || !strings.Contains(err.Error(), "not installed") {
		t.Fatalf("error %v", err)
	}
}

func TestStageDeadlineBoundsTheRun(t *testing.T) {
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "site.yml"), []byte("- hosts: localhost\n  tasks:\n    - ansible.builtin.pause:\n        seconds: 30\n"), 0o644)
	f := newFixture(t, "")
	req := request(dir, "", extensions.AnsibleOptions{ExecutionTimeout: 3600})
	req.Deadline = time.Now().Add(300 * time.Millisecond)
	_, err := f.runner.Run(context.Background(), req)
	if !extensions.TaskTimeout.Is(err) || !strings.Contains(err.Error(), "stage deadline") {
		t.Fatalf("error %v", err)
	}
}
