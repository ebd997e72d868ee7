package ansible

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hostforge/hostforge/extensions"
)

// Defaults of a task.
const (
	// DefaultExecutionTimeout bounds a playbook whose executionTimeout is 0.
	DefaultExecutionTimeout = extensions.DefaultAnsibleTimeout
	// DefaultTick is the progress interval of a task whose
	// executionTimeoutTick is 0.
	DefaultTick = 30 * time.Second
	// MaxOutputs bounds the context JSON a playbook writes.
	MaxOutputs = 1 << 20
	// MaxTaskOutput caps the output of ansible-playbook that is recorded:
	// its last MaxTaskOutput bytes.
	MaxTaskOutput = 8 << 10
)

// Files of a run's working directory.
const (
	InventoryFile = "inventory.yml"
	VariablesFile = "variables.json"
	// contextDir holds the context JSON the playbook writes, out of the
	// way of the bundle's own files.
	contextDir  = ".hostforge"
	contextFile = "context.json"
)

// inventory is the inventory every run gets: the playbook runs on this
// host (MetalSoft runs it on the site controller) and reaches the server
// through the event's variables.
const inventory = `all:
  hosts:
    localhost:
      ansible_connection: local
      ansible_python_interpreter: "{{ ansible_playbook_python }}"
`

// Config is what a Runner needs from its site.
type Config struct {
	// Playbooks runs ansible-playbook (Exec{} when nil: the one in PATH).
	Playbooks Playbooks
	// CacheDir holds unpacked bundles by SHA-256 (the user's cache
	// directory's hostforge/ansible when empty).
	CacheDir string
	// WorkDir is where each run gets its temporary working directory (the
	// system's temporary directory when empty).
	WorkDir string
	// ContainerRuntime (podman or docker, a name in PATH or a path) runs
	// tasks that name an execution environment (ee); empty refuses them.
	ContainerRuntime string
	// HTTPClient downloads bundles (TLS verified against the system's
	// roots and CAPEM when nil).
	HTTPClient *http.Client
	// CAPEM holds certificates trusted besides the system's roots, for
	// bundle URLs (when HTTPClient is nil).
	CAPEM []byte
	// Env holds the site's ANSIBLE_* settings (the config's
	// extensions.ansible_env), given to every run. ansible-playbook gets
	// nothing else of the worker's environment but PATH, HOME and LANG (see
	// Exec); a name outside ANSIBLE_* is refused.
	Env map[string]string
	// MaxBundle bounds a bundle archive's download and the files it
	// unpacks to (DefaultMaxBundle when 0; the config's
	// extensions.asset_max_bytes).
	MaxBundle int64
	// Log receives a line per run and the progress lines every
	// executionTimeoutTick; never variables or output.
	Log *slog.Logger
}

// Runner runs ExtensionTaskAnsible tasks: it implements extensions.Runner
// and is safe for concurrent use.
type Runner struct {
	cfg Config
	// env is cfg.Env as NAME=value, sorted.
	env []string
}

var _ extensions.Runner = (*Runner)(nil)

// RunnerConfig is an EXTENSION_RUNNER_CONFIG_INVALID failure.
func RunnerConfig(format string, args ...any) error {
	return extensions.RunnerConfigInvalid.New(format, args...)
}

// New returns a runner.
func New(cfg Config) (*Runner, error) {
	if cfg.Playbooks == nil {
		cfg.Playbooks = Exec{}
	}
	if cfg.CacheDir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil, RunnerConfig("no cache directory for Ansible bundles: set extensions.asset_cache (%v)", err)
		}
		cfg.CacheDir = filepath.Join(base, "hostforge", "ansible")
	}
	if cfg.WorkDir == "" {
		cfg.WorkDir = os.TempDir()
	}
	if cfg.HTTPClient == nil {
		roots, err := x509.SystemCertPool()
		if err != nil || roots == nil {
			roots = x509.NewCertPool()
		}
		if len(bytes.TrimSpace(cfg.CAPEM)) > 0 && !roots.AppendCertsFromPEM(cfg.CAPEM) {
			return nil, RunnerConfig("the CA bundle holds no PEM certificate")
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		cfg.HTTPClient = &http.Client{Transport: t, Timeout: 10 * time.Minute}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxBundle < 0 {
		return nil, RunnerConfig("extensions.asset_max_bytes is %d: want a positive size", cfg.MaxBundle)
	}
	if cfg.MaxBundle == 0 {
		cfg.MaxBundle = DefaultMaxBundle
	}
	env, err := siteEnv(cfg.Env)
	if err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg, env: env}, nil
}

// siteEnv checks the site's settings and renders them as NAME=value in
// name order. Only Ansible's own settings pass: the config cannot hand a
// playbook a variable of the worker's kind (a DSN, a token, LD_PRELOAD).
func siteEnv(m map[string]string) ([]string, error) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	env := make([]string, 0, len(names))
	for _, k := range names {
		if !ansibleSetting.MatchString(k) {
			return nil, RunnerConfig("extensions.ansible_env: %q is not an Ansible setting (ANSIBLE_ followed by upper-case letters, digits and _)", k)
		}
		if strings.ContainsRune(m[k], 0) {
			return nil, RunnerConfig("extensions.ansible_env: %s holds a NUL byte", k)
		}
		env = append(env, k+"="+m[k])
	}
	return env, nil
}

var ansibleSetting = regexp.MustCompile(`^ANSIBLE_[A-Z0-9_]+$`)

// Run runs one Ansible task: the bundle fetched (or taken from the
// cache), copied into a fresh working directory with inventory.yml and
// variables.json, `ansible-playbook -i inventory.yml PLAYBOOK -e
// @variables.json` run under executionTimeout, and the JSON object the
// playbook wrote at context_json_file_path returned as the extension's
// outputs ({} when it wrote none: a run replaces the stored outputs).
func (r *Runner) Run(ctx context.Context, req extensions.Request) (extensions.Result, error) {
	o := req.Ansible
	if o == nil {
		return extensions.Result{}, extensions.TaskFailed.New("extension %s task %s is not an Ansible task (%s)", req.Extension, req.Task, req.TaskType)
	}
	asset, ok := findAsset(req.Assets, o.Asset)
	if !ok {
		return extensions.Result{}, AssetInvalid.New("the task's asset %q is not among the definition's assets", o.Asset)
	}
	if !bundleTypes[asset.AssetType] {
		return extensions.Result{}, AssetInvalid.New("the task's asset %s is a %s, not a Bundle or AnsibleBundle", asset.Name, asset.AssetType)
	}
	var container *Container
	if o.EE != "" {
		img, err := r.executionEnvironment(req, o.EE)
		if err != nil {
			return extensions.Result{}, err
		}
		container = &Container{Runtime: r.cfg.ContainerRuntime, Image: img, Name: "hostforge-ansible-" + randomName()}
	}
	timeout, limit := DefaultExecutionTimeout, ""
	if o.ExecutionTimeout > 0 {
		timeout = time.Duration(o.ExecutionTimeout) * time.Second
	}
	limit = "its executionTimeout of " + timeout.String()
	if !req.Deadline.IsZero() {
		left := time.Until(req.Deadline)
		if left <= 0 {
			return extensions.Result{}, extensions.TaskTimeout.New("the playbook was not run: the event's stage deadline had passed")
		}
		if left < timeout {
			timeout, limit = left, "the event's stage deadline"
		}
	}
	tick := DefaultTick
	if o.ExecutionTimeoutTick > 0 {
		tick = time.Duration(o.ExecutionTimeoutTick) * time.Second
	}
	log := r.cfg.Log.With("extension", req.Extension, "task", req.Task, "delivery", req.DeliveryID, "playbook", o.Playbook)

	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	bundle, err := r.bundle(tctx, log, asset, req.Source)
	if err != nil {
		if ctx.Err() != nil {
			return extensions.Result{}, ctx.Err()
		}
		if tctx.Err() != nil {
			return extensions.Result{}, extensions.TaskTimeout.New("fetching the bundle of asset %s did not finish within %s", asset.Name, limit)
		}
		return extensions.Result{}, err
	}
	run, err := os.MkdirTemp(r.cfg.WorkDir, "hostforge-ansible-")
	if err != nil {
		return extensions.Result{}, RunnerConfig("no working directory for the playbook in %s: %v", r.cfg.WorkDir, err)
	}
	defer os.RemoveAll(run)
	work := filepath.Join(run, "work")
	root, playbook, err := bundleRoot(bundle, o.Playbook)
	if err != nil {
		return extensions.Result{}, AssetInvalid.New("asset %s: %v", asset.Name, err)
	}
	if err := copyTree(root, work, run); err != nil {
		if errors.Is(err, errLinkOut) {
			return extensions.Result{}, AssetInvalid.New("asset %s: %v", asset.Name, err)
		}
		return extensions.Result{}, RunnerConfig("copying the bundle into the working directory %s: %v", run, err)
	}
	ctxPath := filepath.Join(work, contextDir, contextFile)
	varPath := ctxPath
	if container != nil {
		varPath = path.Join(ContainerDir, contextDir, contextFile)
	}
	vars, err := variables(req, varPath)
	if err != nil {
		return extensions.Result{}, err
	}
	if err := writeRunFiles(work, vars); err != nil {
		return extensions.Result{}, RunnerConfig("writing the run's files in %s: %v", run, err)
	}

	out := &tail{max: MaxTaskOutput}
	// The site's settings first: the run's own (plain output, its
	// temporary files inside the run's directory) win over them.
	env := append(append([]string(nil), r.env...),
		"ANSIBLE_NOCOLOR=1", "ANSIBLE_FORCE_COLOR=0", "ANSIBLE_RETRY_FILES_ENABLED=0", "ANSIBLE_LOCAL_TEMP="+filepath.Join(run, "tmp"), "PYTHONUNBUFFERED=1")
	inv := Invocation{Dir: work, Playbook: playbook, Inventory: InventoryFile, ExtraVars: VariablesFile, Output: out, Container: container, Env: env}
	start := time.Now()
	stopTicks := progress(log, tick, start)
	exit, err := r.cfg.Playbooks.Play(tctx, inv)
	stopTicks()
	took := time.Since(start).Round(time.Millisecond)
	output := out.String()
	switch {
	case err != nil && ctx.Err() != nil:
		return extensions.Result{}, ctx.Err()
	case err != nil && tctx.Err() != nil:
		log.Warn("Ansible task timed out", "timeout", timeout)
		f := extensions.TaskTimeout.New("ansible-playbook %s did not finish within %s and was killed", playbook, limit)
		f.Detail = recordedOutput(req, output, out)
		return extensions.Result{}, f
	case errors.Is(err, ErrNoAnsible):
		return extensions.Result{}, RunnerConfig("ansible-playbook is not installed on this worker (install ansible-core, e.g. apt-get install ansible-core)")
	case err != nil:
		return extensions.Result{}, RunnerConfig("ansible-playbook could not be started: %v", err)
	}
	head := fmt.Sprintf("ansible-playbook %s exited %d after %s", playbook, exit, took)
	if exit != 0 {
		log.Warn("Ansible task failed", "exit", exit, "took", took)
		f := PlaybookFailed.New("%s", head)
		f.Detail = strings.TrimPrefix(recordedOutput(req, output, out), "\n")
		return extensions.Result{}, f
	}
	msg := head + recordedOutput(req, output, out)
	outputs, err := readOutputs(ctxPath)
	if err != nil {
		return extensions.Result{}, err
	}
	log.Info("Ansible task ran", "took", took)
	return extensions.Result{Message: msg, Outputs: outputs}, nil
}

// executionEnvironment resolves the task's ee to an image, or refuses it
// when no container runtime is configured.
func (r *Runner) executionEnvironment(req extensions.Request, ee string) (string, error) {
	if r.cfg.ContainerRuntime == "" {
		return "", RunnerConfig("task %s runs in the execution environment %q (ee), and this worker has no container runtime configured: set extensions.container_runtime (podman or docker), or remove ee to run ansible-playbook on the worker itself", req.Task, ee)
	}
	a, ok := findAsset(req.Assets, ee)
	if !ok {
		return "", AssetInvalid.New("the task's ee %q is not among the definition's assets", ee)
	}
	if a.AssetType != "OciImage" {
		return "", AssetInvalid.New("the task's ee %s is a %s, not an OciImage", a.Name, a.AssetType)
	}
	if img := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(a.URL), "docker://"), "oci://"); img != "" {
		return img, nil
	}
	img := strings.Trim(strings.Join([]string{a.RepositoryRegistry, a.NamespaceRegistry}, "/"), "/")
	if img == "" {
		return "", AssetInvalid.New("the OciImage asset %s names no image (url, or repositoryRegistry/namespaceRegistry and tagRegistry)", a.Name)
	}
	if a.TagRegistry != "" {
		img += ":" + a.TagRegistry
	}
	return img, nil
}

// bundleRoot finds the playbook in the bundle: at its top, or under its
// one top-level directory (an archive of a folder). It refuses a playbook
// path that leaves the bundle.
func bundleRoot(bundle, playbook string) (root, rel string, err error) {
	clean := path.Clean(strings.ReplaceAll(playbook, "\\", "/"))
	if playbook == "" || path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", "", fmt.Errorf("the playbook %q is not a path inside the bundle", playbook)
	}
	if st, err := os.Stat(filepath.Join(bundle, filepath.FromSlash(clean))); err == nil && st.Mode().IsRegular() {
		return bundle, clean, nil
	}
	entries, err := os.ReadDir(bundle)
	if err == nil && len(entries) == 1 && entries[0].IsDir() {
		sub := filepath.Join(bundle, entries[0].Name())
		if st, err := os.Stat(filepath.Join(sub, filepath.FromSlash(clean))); err == nil && st.Mode().IsRegular() {
			return sub, clean, nil
		}
	}
	return "", "", fmt.Errorf("the playbook %s is not in the bundle", clean)
}

// variables are the task's extra-vars: the rendered variables (the
// payload's keys at top level, configVars, extensionInstanceVariables)
// plus context_json_file_path and the delivery's identity.
func variables(req extensions.Request, contextPath string) ([]byte, error) {
	vars := map[string]json.RawMessage{}
	if len(req.Variables) > 0 {
		if err := json.Unmarshal(req.Variables, &vars); err != nil {
			return nil, extensions.TemplateFailed.New("the task's extra-vars are not a JSON object: %v", err)
		}
	}
	for k, v := range map[string]string{
		"context_json_file_path": contextPath,
		"hostforge_delivery_id":  req.DeliveryID,
		"hostforge_event_id":     req.EventID,
		"hostforge_stage":        string(req.Stage),
		"hostforge_extension":    req.Extension,
		"hostforge_task":         req.Task,
	} {
		b, _ := json.Marshal(v)
		vars[k] = b
	}
	return json.Marshal(vars)
}

func writeRunFiles(work string, vars []byte) error {
	if err := os.MkdirAll(filepath.Join(work, contextDir), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(work, InventoryFile), []byte(inventory), 0o600); err != nil {
		return err
	}
	// The extra-vars may hold the payload's secrets: owner-only, removed
	// with the run.
	return os.WriteFile(filepath.Join(work, VariablesFile), vars, 0o600)
}

// readOutputs reads the context JSON: {} when the playbook wrote none.
func readOutputs(p string) (json.RawMessage, error) {
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return json.RawMessage(`{}`), nil
	}
	if err != nil {
		return nil, OutputsInvalid.New("context_json_file_path cannot be read: %v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxOutputs+1))
	if err != nil {
		return nil, OutputsInvalid.New("context_json_file_path cannot be read: %v", err)
	}
	if len(b) > MaxOutputs {
		return nil, OutputsInvalid.New("the context JSON is larger than %d KiB", MaxOutputs>>10)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
		what := "not JSON"
		if err == nil || json.Valid(b) {
			what = "JSON, but not an object"
		}
		return nil, OutputsInvalid.New("the context JSON is %s (%d bytes)", what, len(b))
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, b)
	return json.RawMessage(compact.Bytes()), nil
}

// errLinkOut marks a bundle link that leads out of the bundle.
var errLinkOut = errors.New("leads out of the bundle")

// copyTree copies the bundle into a run's working directory: files,
// directories and symbolic links, with their permission bits. Every link
// is resolved through the bundle's root first: one that leads out of it,
// alone or through other links, or to nothing, is refused (errLinkOut).
// skip (the run's own directory, should a local bundle directory hold the
// working directory) is left out.
func copyTree(src, dst, skip string) error {
	root, err := os.OpenRoot(src)
	if err != nil {
		return err
	}
	defer root.Close()
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == skip {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if _, err := root.Stat(rel); err != nil {
				return fmt.Errorf("the link %s (to %q) %w or to nothing in it", filepath.ToSlash(rel), target, errLinkOut)
			}
			return os.Symlink(target, to)
		case info.Mode().IsRegular():
			return copyFile(p, to, info.Mode().Perm())
		}
		return nil
	})
}

func copyFile(from, to string, perm fs.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, perm|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// progress logs a line every tick while a playbook runs (its
// executionTimeoutTick); the returned stop ends it.
func progress(log *slog.Logger, tick time.Duration, start time.Time) (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				log.Info("Ansible task still running", "elapsed", time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() { close(done); <-ended }
}

// tail keeps the last max bytes written to it and counts them all.
type tail struct {
	mu    sync.Mutex
	max   int
	b     []byte
	total int64
	// sum hashes everything written.
	sum hash.Hash
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sum == nil {
		t.sum = sha256.New()
	}
	t.sum.Write(p)
	t.total += int64(len(p))
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.b), "�")
}

// Sum is the SHA-256 of everything written.
func (t *tail) Sum() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sum == nil {
		t.sum = sha256.New()
	}
	return t.sum.Sum(nil)
}

func (t *tail) Total() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

// recordedOutput is what the record keeps of the playbook's output: its
// tail, or for a task that receives secrets (its extra-vars hold them, and
// a play may print them) only its SHA-256 and length.
func recordedOutput(req extensions.Request, output string, t *tail) string {
	if !req.IncludesSecrets {
		return outputText(output, t)
	}
	if t.Total() == 0 {
		return ""
	}
	return "\noutput: " + extensions.DigestSum(t.Sum(), t.Total()) + extensions.NotRecorded
}

func outputText(output string, t *tail) string {
	output = strings.TrimSpace(output)
	if output == "" {
		return ""
	}
	if total := t.Total(); total > int64(t.max) {
		return fmt.Sprintf("\noutput (the last %d of %d bytes):\n%s", len(output), total, output)
	}
	return "\noutput:\n" + output
}
