package wiring

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/ansible"
	"github.com/hostforge/hostforge/adapters/ssh"
	"github.com/hostforge/hostforge/adapters/webhook"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
)

// ExtensionsConfig is the extensions: section: where the definitions are
// and what the task runners need from the site.
type ExtensionsConfig struct {
	// Definitions is the directory of definition files (*.json).
	Definitions string `yaml:"definitions"`
	// KnownHosts is the known_hosts file SSH tasks' host keys are verified
	// against.
	KnownHosts string `yaml:"known_hosts"`
	// CAFile holds certificates trusted, besides the system's roots, for
	// webhook receivers and Ansible bundle URLs.
	CAFile string `yaml:"ca_file"`
	// ContainerRuntime (podman or docker) runs Ansible tasks that name an
	// execution environment (ee); without it such tasks are refused.
	ContainerRuntime string `yaml:"container_runtime"`
	// AssetCache is the directory of unpacked Ansible bundles.
	AssetCache string `yaml:"asset_cache"`
	// AnsiblePlaybook is the ansible-playbook program.
	AnsiblePlaybook string `yaml:"ansible_playbook"`
	// AssetMaxBytes caps a bundle's download and what it unpacks to
	// (ansible.DefaultMaxBundle when left out).
	AssetMaxBytes ByteSize `yaml:"asset_max_bytes"`
	// AnsibleEnv are the ANSIBLE_* settings (NAME=value) every playbook
	// gets; it gets nothing else of the worker's environment but PATH,
	// HOME and LANG.
	AnsibleEnv []string `yaml:"ansible_env"`
	// StageDeadline bounds the dispatch of every event hostforge's
	// sources fire (extensions.DefaultStageDeadline when left out).
	StageDeadline enrollment.Duration `yaml:"stage_deadline"`
	// Instances are the extensions' inputs and configVars.
	Instances ExtensionInstances `yaml:"instances"`
	// SwitchRoles are the NetBox device role slugs of switches: their
	// events fire the switch stages, every other device's the server ones.
	SwitchRoles []string `yaml:"switch_roles"`
	// NetBoxEvents is the endpoint of NetBox's event rules.
	NetBoxEvents *NetBoxEventsConfig `yaml:"netbox_events"`
	// RenderBudget is the bytes of strings and arrays one render of a
	// task's template may build (default extensions.DefaultRenderBudget).
	RenderBudget ByteSize `yaml:"render_budget"`
	// RenderTimeout is how long one render may take (default
	// extensions.DefaultRenderTimeout).
	RenderTimeout enrollment.Duration `yaml:"render_timeout"`
}

// The largest render limits the config accepts: a render is one template
// and one payload, so more than this is a template that runs away, and
// a worker renders several at once.
const (
	maxRenderBudget  = 1 << 30
	maxRenderTimeout = time.Minute
)

// RenderLimits are the section's render limits (zero: the defaults).
func (x *ExtensionsConfig) RenderLimits() extensions.RenderLimits {
	if x == nil {
		return extensions.RenderLimits{}
	}
	return extensions.RenderLimits{Budget: int64(x.RenderBudget), Timeout: x.RenderTimeout.D()}
}

// NetBoxEventsConfig is extensions.netbox_events: where NetBox's event
// rules send their webhooks, and the secret they are signed with.
type NetBoxEventsConfig struct {
	Listen   string `yaml:"listen"`
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// SecretItem is the vault item whose NetBoxSecretField is the secret
	// of NetBox's webhook (its X-Hook-Signature key).
	SecretItem string `yaml:"secret_item"`
}

// NetBoxSecretField is the field of extensions.netbox_events.secret_item
// holding the NetBox webhook's secret.
const NetBoxSecretField = "secret"

// MinNetBoxSecretLen is the shortest NetBox webhook secret accepted.
const MinNetBoxSecretLen = 8

// validateExtensions checks the section without touching the file system.
func (c *Config) validateExtensions() error {
	x := c.Extensions
	if x == nil {
		return nil
	}
	if strings.TrimSpace(x.Definitions) == "" {
		return c.keyError("extensions.definitions", "missing: the directory of extension definitions (*.json)")
	}
	switch filepath.Base(x.ContainerRuntime) {
	case ".", "podman", "docker":
	default:
		return c.keyError("extensions.container_runtime", "%q: want podman or docker (a name in PATH, or a path)", x.ContainerRuntime)
	}
	if _, err := AnsibleEnv(x.AnsibleEnv); err != nil {
		return c.keyError("extensions.ansible_env", "%v", err)
	}
	if x.RenderBudget < 0 || x.RenderBudget > maxRenderBudget {
		return c.keyError("extensions.render_budget", "%s: want more than 0 and at most %s (default %s)", x.RenderBudget, ByteSize(maxRenderBudget), ByteSize(extensions.DefaultRenderBudget))
	}
	if x.RenderTimeout < 0 || x.RenderTimeout.D() > maxRenderTimeout {
		return c.keyError("extensions.render_timeout", "%s: want more than 0 and at most %s (default %s)", x.RenderTimeout.D(), maxRenderTimeout, extensions.DefaultRenderTimeout)
	}
	if x.StageDeadline < 0 || (x.StageDeadline == 0 && c.lines["extensions.stage_deadline"] != 0) {
		return c.keyError("extensions.stage_deadline", "%s: want a positive duration (e.g. 1h); no task could run", x.StageDeadline.D())
	}
	for i, r := range x.SwitchRoles {
		if strings.TrimSpace(r) == "" {
			return c.keyError(fmt.Sprintf("extensions.switch_roles[%d]", i), "empty: want a NetBox device role slug")
		}
	}
	for name, vals := range x.Instances {
		for k, v := range vals {
			if v.Vault != "" {
				if _, _, ok := (extensions.SiteValue{Vault: v.Vault}).VaultRef(); !ok {
					return c.keyError(extensions.InstanceKey(name, k), "vault: %q: want ITEM.FIELD, the vault item's name and its field", v.Vault)
				}
			}
		}
	}
	if e := x.NetBoxEvents; e != nil {
		switch {
		case e.Listen == "":
			return c.keyError("extensions.netbox_events.listen", "missing: host:port the NetBox events endpoint listens on")
		case e.CertFile == "" || e.KeyFile == "":
			return c.keyError("extensions.netbox_events.cert_file", "the NetBox events endpoint serves TLS only: set cert_file and key_file")
		case strings.TrimSpace(e.SecretItem) == "":
			return c.keyError("extensions.netbox_events.secret_item", "missing: the vault item whose %s field is the secret NetBox signs its webhooks with (X-Hook-Signature); unsigned events are refused", NetBoxSecretField)
		case c.Vault == nil:
			return c.keyError("extensions.netbox_events.secret_item", "names a vault item, but the config has no vault: section")
		}
	}
	return nil
}

// AnsibleEnv reads extensions.ansible_env (NAME=value entries) as the
// Ansible runner's settings: each name an ANSIBLE_* setting, given once.
func AnsibleEnv(entries []string) (map[string]string, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	env := make(map[string]string, len(entries))
	for i, kv := range entries {
		k, v, ok := strings.Cut(kv, "=")
		switch {
		case !ok:
			return nil, fmt.Errorf("[%d] %q: want NAME=value", i, kv)
		case !ansibleSetting.MatchString(k):
			return nil, fmt.Errorf("[%d] %q is not an Ansible setting (ANSIBLE_ followed by upper-case letters, digits and _): a playbook gets no other variable", i, k)
		}
		if _, dup := env[k]; dup {
			return nil, fmt.Errorf("[%d] %s is given twice", i, k)
		}
		env[k] = v
	}
	return env, nil
}

var ansibleSetting = regexp.MustCompile(`^ANSIBLE_[A-Z0-9_]+$`)

// RunnerOptions are what the extension task runners need from the site.
type RunnerOptions struct {
	// Vault holds the items tasks name (signingSecret, privateKeySecret);
	// nil fails the tasks that name one.
	Vault interface {
		Item(ctx context.Context, name string) (map[string]string, error)
	}
	// KnownHosts, CAFile, ContainerRuntime, AssetCache and AnsiblePlaybook
	// are the extensions: section's keys (or the flags of 'extensions fire').
	KnownHosts, CAFile, ContainerRuntime, AssetCache, AnsiblePlaybook string
	// AssetMaxBytes and AnsibleEnv are extensions.asset_max_bytes and
	// extensions.ansible_env.
	AssetMaxBytes int64
	AnsibleEnv    []string
	// Log receives the runners' logs.
	Log *slog.Logger
}

// ExtensionRunners builds the three task runners — webhook, SSH (host
// keys verified against KnownHosts) and Ansible (the real ansible-playbook)
// — from the site's settings. close releases the webhook runner's idle
// connections. Errors are EXTENSION_RUNNER_CONFIG_INVALID naming the key.
func ExtensionRunners(o RunnerOptions) (runners map[extensions.TaskType]extensions.Runner, close func(), err error) {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var ca []byte
	if o.CAFile != "" {
		if ca, err = os.ReadFile(o.CAFile); err != nil {
			return nil, nil, extensions.RunnerConfigInvalid.New("extensions.ca_file: %v", err)
		}
	}
	var wv webhook.Vault
	var sv ssh.Vault
	if o.Vault != nil {
		wv, sv = o.Vault, o.Vault
	}
	hooks, err := webhook.New(webhook.Config{Vault: wv, CAPEM: ca, Log: log})
	if err != nil {
		return nil, nil, err
	}
	env, err := AnsibleEnv(o.AnsibleEnv)
	if err != nil {
		hooks.Close()
		return nil, nil, extensions.RunnerConfigInvalid.New("extensions.ansible_env: %v", err)
	}
	playbooks := ansible.Exec{Path: o.AnsiblePlaybook}
	plays, err := ansible.New(ansible.Config{Playbooks: playbooks, CacheDir: o.AssetCache, ContainerRuntime: o.ContainerRuntime, CAPEM: ca,
		MaxBundle: o.AssetMaxBytes, Env: env, Log: log})
	if err != nil {
		hooks.Close()
		return nil, nil, err
	}
	return map[extensions.TaskType]extensions.Runner{
		extensions.TaskWebhook: hooks,
		extensions.TaskSSH:     &ssh.ExtensionRunner{KnownHosts: o.KnownHosts, Vault: sv, Log: log},
		extensions.TaskAnsible: plays,
	}, hooks.Close, nil
}

// openExtensions wires extension dispatch from the extensions: section:
// the definitions directory loaded into a registry (files that do not
// validate are logged and left out), the three runners, the execution
// store, and the source of the serverRegistered event (NetBox and the
// Ironic instances). Without the section, Systems.Extensions is nil and
// enrollments fire no events.
func openExtensions(ctx context.Context, cfg *Config, s *Systems, log *slog.Logger) error {
	x := cfg.Extensions
	if x == nil {
		return nil
	}
	reg, bad, err := extensions.LoadDir(x.Definitions)
	if err != nil {
		return cfg.invalid("extensions.definitions", "%v", err)
	}
	for _, fp := range bad {
		for _, p := range fp.Problems {
			if p.Warning {
				log.Warn("extension definition warning", "phase", "wiring", "file", fp.File, "problem", p.String())
			} else {
				log.Error("extension definition left out", "phase", "wiring", "file", fp.File, "problem", p.String())
			}
		}
	}
	for _, f := range []struct{ key, path string }{{"extensions.known_hosts", x.KnownHosts}, {"extensions.ca_file", x.CAFile}} {
		if f.path == "" {
			continue
		}
		if _, err := os.ReadFile(f.path); err != nil {
			return cfg.invalid(f.key, "%v", err)
		}
	}
	o := RunnerOptions{KnownHosts: x.KnownHosts, CAFile: x.CAFile, ContainerRuntime: x.ContainerRuntime, AssetCache: x.AssetCache, AnsiblePlaybook: x.AnsiblePlaybook,
		AssetMaxBytes: int64(x.AssetMaxBytes), AnsibleEnv: x.AnsibleEnv, Log: log}
	if s.Vault != nil {
		o.Vault = s.Vault
	}
	runners, closeRunners, err := ExtensionRunners(o)
	if err != nil {
		return err
	}
	s.OnClose(func() error { closeRunners(); return nil })
	store, err := openExtensionStore(ctx, s, log)
	if err != nil {
		return err
	}
	d := extensions.NewDispatcher(reg, runners, store)
	d.Log = log
	d.Limits = x.RenderLimits()
	d.Log, d.Instances, d.StageDeadline = log, x.Instances.Instances(), x.StageDeadline.D()
	if s.Vault != nil {
		d.Vault = s.Vault
	}
	if err := checkInstances(ctx, cfg, reg, s, log); err != nil {
		return err
	}
	if s.Enrollment != nil {
		d.Servers = &serverSource{netbox: s.Enrollment.NetBox, ironic: s.Enrollment.Ironic}
	}
	s.Extensions = d
	if s.Projector != nil {
		s.DeployWatcher = &extensions.DeployWatcher{Dispatcher: d, Log: log}
		s.Projector.Observer = s.DeployWatcher
	}
	n := 0
	for _, e := range reg.Extensions() {
		if e.Active() {
			n++
		}
	}
	log.Info("extensions wired", "phase", "wiring", "definitions", x.Definitions, "active", n, "left_out", len(bad))
	return nil
}

// NetBoxEventsSystems are what the endpoint of NetBox's event rules needs:
// where it listens, its TLS, the webhook's secret and the mapping rules.
type NetBoxEventsSystems struct {
	Listen string
	TLS    *tls.Config
	// Secret is the NetBox webhook's secret (registered with the
	// process's Secrets; never logged).
	Secret []byte
	Rules  extensions.NetBoxRules
}

// OpenNetBoxEvents loads the endpoint's certificate and reads the
// webhook's secret from the vault item extensions.netbox_events.secret_item
// names, for a process that serves the endpoint (the worker, 'extensions
// listen'; other commands never read them): a missing item or field, or a
// secret shorter than MinNetBoxSecretLen characters, is CONFIG_INVALID
// naming the key. Without the section it returns nil.
func OpenNetBoxEvents(ctx context.Context, cfg *Config, s *Systems) (*NetBoxEventsSystems, error) {
	if cfg.Extensions == nil || cfg.Extensions.NetBoxEvents == nil {
		return nil, nil
	}
	e := cfg.Extensions.NetBoxEvents
	cert, err := tls.LoadX509KeyPair(e.CertFile, e.KeyFile)
	if err != nil {
		return nil, cfg.invalid("extensions.netbox_events.cert_file", "%v", err)
	}
	const key = "extensions.netbox_events.secret_item"
	if s.Vault == nil {
		return nil, cfg.invalid(key, "names a vault item, but the config has no vault: section")
	}
	item, err := s.Vault.Item(ctx, e.SecretItem)
	if errors.Is(err, hostforge.ErrNotFound) {
		return nil, cfg.invalid(key, "the vault %s has no item %q: add it with a %s field holding the NetBox webhook's secret (%d characters or more)", s.Vault.Path(), e.SecretItem, NetBoxSecretField, MinNetBoxSecretLen)
	}
	if err != nil {
		return nil, cfg.invalid(key, "reading the vault item %q: %v", e.SecretItem, err)
	}
	secret := item[NetBoxSecretField]
	s.Secrets.Add(secret)
	if n := utf8.RuneCountInString(secret); n < MinNetBoxSecretLen {
		return nil, cfg.invalid(key, "the vault item %q's %s field has %d characters; want at least %d", e.SecretItem, NetBoxSecretField, n, MinNetBoxSecretLen)
	}
	return &NetBoxEventsSystems{Listen: e.Listen, Secret: []byte(secret),
		TLS:   &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}},
		Rules: extensions.NetBoxRules{SwitchRoles: append([]string(nil), cfg.Extensions.SwitchRoles...), StageDeadline: cfg.Extensions.StageDeadline.D()}}, nil
}

// checkInstances refuses what extensions.instances cannot give the loaded
// extensions (a required input without a value, an inline password, a key
// no definition declares, a vault item that is not there), logs the tasks
// whose own timeout the stage deadline cuts, and warns of instances of
// extensions that are not loaded.
func checkInstances(ctx context.Context, cfg *Config, reg *extensions.Registry, s *Systems, log *slog.Logger) error {
	x := cfg.Extensions
	var errs []string
	for _, p := range cfg.InstanceProblems(reg) {
		if strings.Contains(p.Message, "no active extension named") {
			log.Warn("extension instance of no loaded extension", "phase", "wiring", "problem", p.Path+": "+p.Message)
			continue
		}
		errs = append(errs, p.Path+": "+p.Message)
	}
	if len(errs) > 0 {
		return ConfigInvalid.New("%s: extensions.instances: %s", cfg.path, strings.Join(errs, "; "))
	}
	for _, e := range reg.Extensions() {
		if !e.Active() {
			continue
		}
		for _, p := range e.DeadlineWarnings(x.StageDeadline.D()) {
			log.Warn("extension task longer than the stage deadline", "phase", "wiring", "file", e.Source, "problem", p.String())
		}
	}
	for name, vals := range x.Instances {
		for k, v := range vals {
			if v.Vault == "" {
				continue
			}
			key := extensions.InstanceKey(name, k)
			if s.Vault == nil {
				return cfg.invalid(key, "names the vault item %s, but the config has no vault: section", v.Vault)
			}
			item, field, _ := (extensions.SiteValue{Vault: v.Vault}).VaultRef()
			fields, err := s.Vault.Item(ctx, item)
			if err != nil {
				return cfg.invalid(key, "the vault item %s: %v", item, err)
			}
			val, ok := fields[field]
			if !ok {
				return cfg.invalid(key, "the vault item %s has no field %s", item, field)
			}
			if err := hostforge.CheckChosenSecret(fmt.Sprintf("the value of %s (vault item %s, field %s)", key, item, field), val); err != nil {
				return err
			}
		}
	}
	return nil
}

// serverSource reads what the serverRegistered event maps: the device
// from NetBox, the node's inspection inventory from its Ironic instance.
type serverSource struct {
	netbox enrollment.NetBox
	ironic map[string]enrollment.IronicPhases
}

func (s *serverSource) Device(ctx context.Context, name string) (intent.Device, error) {
	if s.netbox == nil {
		return intent.Device{}, errors.New("no NetBox adapter is wired")
	}
	return s.netbox.Device(ctx, name)
}

func (s *serverSource) Inventory(ctx context.Context, instance, node string) ([]byte, error) {
	p, ok := s.ironic[instance].(*ironic.Phases)
	if !ok || p == nil || p.Client == nil {
		return nil, fmt.Errorf("the Ironic instance %q is not wired in this process", instance)
	}
	return p.Client.Inventory(ctx, node)
}
