package extensions

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hostforge/hostforge/extensions/nunjucks"
)

// TaskType is MetalSoft's ExtensionTaskType.
type TaskType string

// The three task types.
const (
	TaskAnsible TaskType = "ExtensionTaskAnsible"
	TaskWebhook TaskType = "ExtensionTaskWebhook"
	TaskSSH     TaskType = "ExtensionTaskSsh"
)

// FailurePolicy says what a failed task does to the rest of its
// extension's tasks for the same event (hostforge's addition).
type FailurePolicy string

// Failure policies.
const (
	// FailStop stops the extension's remaining tasks for this event (the default).
	FailStop FailurePolicy = "fail"
	// FailContinue goes on with the next task.
	FailContinue FailurePolicy = "continue"
)

// Status is MetalSoft's extension status: only active extensions fire.
type Status string

// Statuses.
const (
	StatusDraft    Status = "draft"
	StatusActive   Status = "active"
	StatusArchived Status = "archived"
)

// Definition is MetalSoft's ExtensionDefinition, field for field.
type Definition struct {
	Kind             string          `json:"kind"`
	SchemaVersion    string          `json:"schemaVersion"`
	Name             string          `json:"name"`
	Label            string          `json:"label"`
	ExtensionType    string          `json:"extensionType"`
	Vendor           string          `json:"vendor"`
	ExtensionVersion string          `json:"extensionVersion"`
	Description      string          `json:"description,omitempty"`
	Icon             string          `json:"icon"`
	Dependencies     Dependencies    `json:"dependencies"`
	Inputs           []Input         `json:"inputs"`
	Outputs          []OutputSpec    `json:"outputs"`
	Infrastructure   json.RawMessage `json:"infrastructure,omitempty"`
	Assets           []Asset         `json:"assets"`
	ConfigVars       []Input         `json:"configVars,omitempty"`
	OnCreate         []StageTasks    `json:"onCreate,omitempty"`
	OnEdit           []StageTasks    `json:"onEdit,omitempty"`
	OnDelete         []StageTasks    `json:"onDelete,omitempty"`
	Actions          json.RawMessage `json:"actions,omitempty"`
	OnAssetChange    []StageTasks    `json:"onAssetChange,omitempty"`
	// Status is hostforge's addition for a definition file without the
	// create-API envelope (whose status field it mirrors); empty is active.
	Status Status `json:"status,omitempty"`
}

// Dependencies are the controller version and OS templates an extension needs.
type Dependencies struct {
	ControllerVersion string   `json:"controllerVersion,omitempty"`
	OSTemplates       []string `json:"osTemplates,omitempty"`
}

// Input is an input or a configVar.
type Input struct {
	Label        string          `json:"label"`
	Name         string          `json:"name"`
	InputType    string          `json:"inputType"`
	SetOnly      bool            `json:"setOnly,omitempty"`
	Hidden       bool            `json:"hidden,omitempty"`
	IsPassword   bool            `json:"isPassword,omitempty"`
	DefaultValue json.RawMessage `json:"defaultValue,omitempty"`
	HelpText     string          `json:"helpText,omitempty"`
	Options      json.RawMessage `json:"options,omitempty"`
}

// OutputSpec declares an output of the extension.
type OutputSpec struct {
	Label      string `json:"label"`
	Name       string `json:"name"`
	OutputType string `json:"outputType,omitempty"`
	Template   string `json:"template,omitempty"`
}

// Asset is a bundle or image tasks reference by name.
type Asset struct {
	Label              string          `json:"label"`
	Name               string          `json:"name"`
	AssetType          string          `json:"assetType"`
	URL                string          `json:"url"`
	RequiredAssets     json.RawMessage `json:"requiredAssets,omitempty"`
	RepositoryRegistry string          `json:"repositoryRegistry,omitempty"`
	NamespaceRegistry  string          `json:"namespaceRegistry,omitempty"`
	TagRegistry        string          `json:"tagRegistry,omitempty"`
	// SHA256 is hostforge's addition: the bundle's expected digest,
	// required when the url is http(s) (a bundle fetched from elsewhere
	// proves what it is by it).
	SHA256 string `json:"sha256,omitempty"`
	// AllowHTTP is hostforge's addition: the asset may be fetched over
	// plain http (its sha256 still verifies it; every use is logged).
	// Without it an http:// url is refused.
	AllowHTTP bool `json:"allowHttp,omitempty"`
}

// StageTasks binds tasks to a stage.
type StageTasks struct {
	Stage string `json:"stage"`
	Tasks []Task `json:"tasks"`
}

// Task is one task of a stage.
type Task struct {
	Label    string          `json:"label"`
	TaskType TaskType        `json:"taskType"`
	Options  json.RawMessage `json:"options"`
	// FailurePolicy is hostforge's addition ("fail" when empty).
	FailurePolicy FailurePolicy `json:"failurePolicy,omitempty"`
	// IncludeSecrets is hostforge's addition: the task receives the
	// payload's secret fields (passwordEncrypted, managementPassword, ...),
	// which every other task, log and record is without.
	IncludeSecrets bool `json:"includeSecrets,omitempty"`
}

// WebhookOptions are ExtensionTaskWebhook's options.
type WebhookOptions struct {
	Endpoint                 string            `json:"endpoint"`
	Method                   string            `json:"method"`
	Headers                  map[string]string `json:"headers,omitempty"`
	RequestTemplate          string            `json:"requestTemplate"`
	ExpectedResponseStatuses []int             `json:"expectedResponseStatuses,omitempty"`
	// Timeout is in seconds; 0 means 30.
	Timeout            int  `json:"timeout,omitempty"`
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
	// SigningSecret (hostforge's addition) names the vault item whose
	// password signs deliveries (Standard Webhooks).
	SigningSecret string `json:"signingSecret,omitempty"`
	// Retries (hostforge's addition) retries connection errors, 429 and 5xx.
	Retries int `json:"retries,omitempty"`
}

// SSHOptions are ExtensionTaskSsh's options.
type SSHOptions struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// Timeout is in seconds.
	Timeout         int    `json:"timeout"`
	CommandTemplate string `json:"commandTemplate"`
	// PrivateKeySecret (hostforge's addition) names the vault item holding
	// the private key.
	PrivateKeySecret string `json:"privateKeySecret,omitempty"`
}

// AnsibleOptions are ExtensionTaskAnsible's options.
type AnsibleOptions struct {
	Asset    string `json:"asset"`
	Playbook string `json:"playbook"`
	// ExecutionTimeout is in seconds; ExecutionTimeoutTick is the progress interval.
	ExecutionTimeout     int    `json:"executionTimeout,omitempty"`
	ExecutionTimeoutTick int    `json:"executionTimeoutTick,omitempty"`
	Version              string `json:"version,omitempty"`
	// EE names an OciImage asset: an execution environment.
	EE string `json:"ee,omitempty"`
}

// Extension is a definition that validated: parsed, its templates compiled,
// ready to render and fire. It is immutable.
type Extension struct {
	// Definition is the definition as read.
	Definition Definition
	// Name is the definition's name: the extension's identity in
	// registries, delivery IDs and records.
	Name string
	// Status comes from the create-API envelope or the definition's status.
	Status Status
	// Digest is the SHA-256 of the file's bytes.
	Digest string
	// Source names where it came from (a file path), for messages.
	Source string
	// Warnings are the problems that do not stop it from loading.
	Warnings Problems

	stages map[Stage][]*BoundTask
}

// BoundTask is one task bound to a stage, in execution order.
type BoundTask struct {
	Task
	// Path is the task's JSON path in the file.
	Path string
	// Index is the task's position among the stage's tasks (repeated stage
	// entries concatenated).
	Index int

	webhook  *WebhookOptions
	ssh      *SSHOptions
	ansible  *AnsibleOptions
	template *nunjucks.Template
}

// Webhook, SSH and Ansible return the task's typed options (nil for
// another task type).
func (t *BoundTask) Webhook() *WebhookOptions { return t.webhook }

// SSH returns the SSH options.
func (t *BoundTask) SSH() *SSHOptions { return t.ssh }

// Ansible returns the Ansible options.
func (t *BoundTask) Ansible() *AnsibleOptions { return t.ansible }

// Policy is the task's failure policy, "fail" by default.
func (t *BoundTask) Policy() FailurePolicy {
	if t.FailurePolicy == "" {
		return FailStop
	}
	return t.FailurePolicy
}

// Tasks returns the tasks bound to stage through onAssetChange, in order:
// repeated entries for one stage concatenate.
func (x *Extension) Tasks(stage Stage) []*BoundTask { return x.stages[stage] }

// Active reports whether the extension fires.
func (x *Extension) Active() bool { return x.Status == StatusActive }

// Task returns the task labelled label of stage.
func (x *Extension) Task(stage Stage, label string) (*BoundTask, bool) {
	for _, t := range x.stages[stage] {
		if t.Label == label {
			return t, true
		}
	}
	return nil, false
}

// Parse reads a definition file: MetalSoft's ExtensionDefinition, or the
// create-API envelope {name, label, description, kind, definition, status}
// around it. It validates everything at once: on any error the Extension
// is nil and the problems (each with its JSON path) say why; warnings
// alone leave the extension usable.
func Parse(b []byte, source string) (*Extension, Problems) {
	var root any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return nil, Problems{{Path: "$", Message: jsonError(b, err)}}
	}
	if dec.More() {
		return nil, Problems{{Path: "$", Message: "more than one JSON value in the file"}}
	}
	v := &validator{}
	def, defPath, status := v.envelope(root)
	if def == nil {
		return nil, v.problems
	}
	v.definition(def, defPath)
	if v.problems.HasErrors() {
		return nil, v.problems
	}
	var x Extension
	raw, _ := json.Marshal(def)
	if err := json.Unmarshal(raw, &x.Definition); err != nil {
		return nil, append(v.problems, Problem{Path: defPath, Message: "the definition does not decode: " + err.Error()})
	}
	sum := sha256.Sum256(b)
	x.Name, x.Status, x.Digest, x.Source = x.Definition.Name, status, hex.EncodeToString(sum[:]), source
	x.stages = v.bound
	x.Warnings = v.problems
	return &x, nil
}

// jsonError describes a JSON syntax error with its line and column.
func jsonError(b []byte, err error) string {
	var off int64 = -1
	switch e := err.(type) {
	case *json.SyntaxError:
		off = e.Offset
	case *json.UnmarshalTypeError:
		off = e.Offset
	}
	if off < 0 {
		return "not JSON: " + err.Error()
	}
	// The offset is just past the offending byte.
	off = max(off-1, 0)
	line, col := 1, 1
	for _, c := range b[:min(int(off), len(b))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	msg := err.Error()
	if strings.Contains(msg, "invalid character ']'") || strings.Contains(msg, "invalid character '}'") {
		msg += " (a trailing comma before it?)"
	}
	return fmt.Sprintf("not JSON: line %d, column %d: %s", line, col, msg)
}

// Problem is one thing wrong with a definition, at a JSON path such as
// $.onAssetChange[0].tasks[1].options.endpoint.
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
	// Warning is set for a problem that does not stop the definition from
	// loading (an unknown field, a field MetalSoft requires but hostforge
	// does not need).
	Warning bool `json:"warning,omitempty"`
}

// String renders "error: PATH: message" (or warning).
func (p Problem) String() string {
	kind := "error"
	if p.Warning {
		kind = "warning"
	}
	return fmt.Sprintf("%s: %s: %s", kind, p.Path, p.Message)
}

// Problems are a definition's problems in the order found.
type Problems []Problem

// HasErrors reports whether any problem is an error.
func (ps Problems) HasErrors() bool {
	for _, p := range ps {
		if !p.Warning {
			return true
		}
	}
	return false
}

// Errors returns the errors only.
func (ps Problems) Errors() Problems {
	var out Problems
	for _, p := range ps {
		if !p.Warning {
			out = append(out, p)
		}
	}
	return out
}

// Err is nil without errors, else EXTENSION_DEFINITION_INVALID listing them.
func (ps Problems) Err(source string) error {
	errs := ps.Errors()
	if len(errs) == 0 {
		return nil
	}
	lines := make([]string, len(errs))
	for i, p := range errs {
		lines[i] = p.Path + ": " + p.Message
	}
	return DefinitionInvalid.New("%s: %d problem(s): %s", source, len(errs), strings.Join(lines, "; "))
}
