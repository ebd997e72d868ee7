package extensions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/extensions/nunjucks"
)

// RenderOptions change how templates render.
type RenderOptions struct {
	// Strict refuses undefined values in templates (a misspelt field is an
	// error naming it instead of an empty string).
	Strict bool
	// Limits bound each render.
	Limits RenderLimits
	// Instance are the site's values of the extension's inputs and
	// configVars, for Render (dispatch takes them from the Dispatcher).
	// Render reads no vault: an isPassword value renders as its
	// PasswordPlaceholder.
	Instance Instance
}

// The defaults of RenderLimits.
const (
	DefaultRenderBudget  = nunjucks.DefaultBudget
	DefaultRenderTimeout = 2 * time.Second
)

// RenderLimits bound one render of one task's template: a template is
// operator input evaluated inside the worker, and a few characters of it
// can ask for gigabytes or for years. A render past either limit fails
// with EXTENSION_TEMPLATE_BUDGET naming the template position. The zero
// value is the defaults.
type RenderLimits struct {
	// Budget is the bytes of strings and arrays a render may build
	// (DefaultRenderBudget when zero; the config's
	// extensions.render_budget).
	Budget int64
	// Timeout is how long a render may take (DefaultRenderTimeout when
	// zero; extensions.render_timeout). It is wall-clock time on purpose:
	// it bounds the CPU a render burns on this machine, which a virtual
	// clock does not see.
	Timeout time.Duration
}

func (l RenderLimits) budget() int64 {
	if l.Budget > 0 {
		return l.Budget
	}
	return DefaultRenderBudget
}

func (l RenderLimits) timeout() time.Duration {
	if l.Timeout > 0 {
		return l.Timeout
	}
	return DefaultRenderTimeout
}

// errRenderDeadline is the cause a render's own deadline stops it with,
// told apart from its caller's context ending (an interrupted run).
var errRenderDeadline = errors.New("past its render deadline")

// Rendered is one task of a stage, rendered without running anything: the
// dry run of `hostforge extensions render`.
type Rendered struct {
	Extension string   `json:"extension"`
	Stage     Stage    `json:"stage"`
	Task      string   `json:"task"`
	TaskType  TaskType `json:"taskType"`
	// Rendered is the rendered requestTemplate (webhook) or commandTemplate
	// (SSH) as a JSON string, or for Ansible the extra-vars object the
	// playbook receives.
	Rendered json.RawMessage `json:"rendered"`
}

// payloadData is an event payload parsed for templates, once per event.
type payloadData struct {
	clean *nunjucks.Object // without secret fields
	full  *nunjucks.Object // with them (nil when there are none, or unknown)

	mu        sync.Mutex
	cleanJSON json.RawMessage // clean, encoded, once
	fullJSON  json.RawMessage
}

// encoded returns obj (d.clean or d.full) as JSON, encoding it once.
func (d *payloadData) encoded(obj *nunjucks.Object) (json.RawMessage, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	slot := &d.cleanJSON
	if obj == d.full {
		slot = &d.fullJSON
	}
	if *slot == nil {
		s, _, err := nunjucks.Dump(obj, "")
		if err != nil {
			return nil, err
		}
		*slot = json.RawMessage(s)
	}
	return *slot, nil
}

func parsePayload(stage Stage, payload []byte) (*nunjucks.Object, error) {
	v, err := nunjucks.FromJSON(payload)
	if err != nil {
		return nil, PayloadInvalid.Wrap(err, "the %s payload is not JSON", stage)
	}
	obj, ok := v.(*nunjucks.Object)
	if !ok {
		return nil, PayloadInvalid.New("the %s payload must be a JSON object with the key %q", stage, stage.PayloadKey())
	}
	return obj, checkPayloadKey(stage, obj)
}

// checkPayloadKey refuses a payload without its stage's object: tasks
// would render every field empty (a networkDevice payload fired as
// serverRegistered runs echo with an empty argument).
func checkPayloadKey(stage Stage, obj *nunjucks.Object) error {
	key := stage.PayloadKey()
	v, ok := obj.Get(key)
	if !ok {
		return PayloadInvalid.New("the payload has no %q key: a %s payload is {%q: {...}} (it has %s)", key, stage, key, keyList(obj))
	}
	if _, ok := v.(*nunjucks.Object); !ok {
		return PayloadInvalid.New("the payload's %q is not a JSON object: a %s payload is {%q: {...}}", key, stage, key)
	}
	return nil
}

func keyList(obj *nunjucks.Object) string {
	keys := obj.Keys()
	if len(keys) == 0 {
		return "no key"
	}
	if len(keys) > 5 {
		keys = append(keys[:5:5], "...")
	}
	return "the keys " + strings.Join(keys, ", ")
}

// newPayloadData parses a payload that may hold secrets.
func newPayloadData(stage Stage, payload []byte) (*payloadData, error) {
	obj, err := parsePayload(stage, payload)
	if err != nil {
		return nil, err
	}
	red, removed := redact(obj)
	d := &payloadData{clean: red.(*nunjucks.Object)}
	if removed {
		d.full = obj
	}
	return d, nil
}

// context builds a task's template variables as MetalSoft exposes them:
// the payload's keys, plus configVars (name → value) when the definition
// declares any and extensionInstanceVariables (the inputs, name → value)
// when it declares inputs. A value is the site's (extensions.instances),
// else the definition's defaultValue; an input without either is left
// out. isPassword values reach every task of their extension (the site
// gave them to it) and make its request secret-bearing.
func (x *Extension) context(t *BoundTask, d *payloadData, sv *siteValues) *nunjucks.Object {
	src := d.clean
	if t.IncludeSecrets && d.full != nil {
		src = d.full
	}
	if sv == nil || (sv.config == nil && sv.inputs == nil) {
		return src
	}
	ctx := nunjucks.NewObject(src.Len() + 2)
	for _, k := range src.Keys() {
		v, _ := src.Get(k)
		ctx.Set(k, v)
	}
	if sv.config != nil {
		ctx.Set("configVars", sv.config)
	}
	if sv.inputs != nil {
		ctx.Set("extensionInstanceVariables", sv.inputs)
	}
	return ctx
}

// render renders one task: the body of a webhook or SSH task, the
// extra-vars of an Ansible task. The render stops when ctx ends (a
// CANCELLED failure) or past opts.Limits (EXTENSION_TEMPLATE_BUDGET).
func (x *Extension) render(ctx context.Context, t *BoundTask, d *payloadData, sv *siteValues, opts RenderOptions) (body string, vars json.RawMessage, err error) {
	data := x.context(t, d, sv)
	switch t.TaskType {
	case TaskAnsible:
		var b json.RawMessage
		if data == d.clean || data == d.full {
			b, err = d.encoded(data)
		} else {
			var s string
			s, _, err = nunjucks.Dump(data, "")
			b = json.RawMessage(s)
		}
		if err != nil {
			return "", nil, TemplateFailed.Wrap(err, "extension %s task %s: extra-vars cannot be encoded", x.Name, t.Label)
		}
		return "", b, nil
	}
	if t.template == nil {
		return "", nil, TemplateFailed.New("extension %s task %s has no template", x.Name, t.Label)
	}
	rctx, cancel := context.WithTimeoutCause(ctx, opts.Limits.timeout(), errRenderDeadline)
	defer cancel()
	out, err := t.template.Render(rctx, data, nunjucks.Options{Strict: opts.Strict, Budget: opts.Limits.budget()})
	if err != nil {
		field := "requestTemplate"
		if t.TaskType == TaskSSH {
			field = "commandTemplate"
		}
		where := fmt.Sprintf("extension %s, stage task %s (%s.options.%s)", x.Name, t.Label, t.Path, field)
		switch {
		case errors.Is(err, nunjucks.ErrBudget):
			return "", nil, TemplateBudget.Wrap(err, "%s: more than the render budget of %d bytes (extensions.render_budget)", where, opts.Limits.budget())
		case errors.Is(err, errRenderDeadline):
			return "", nil, TemplateBudget.Wrap(err, "%s: longer than the render deadline of %s (extensions.render_timeout)", where, opts.Limits.timeout())
		case ctx.Err() != nil:
			return "", nil, hostforge.Cancelled.Wrap(err, "%s: the render was interrupted", where)
		}
		return "", nil, TemplateFailed.Wrap(err, "%s", where)
	}
	if err := checkJSONBody(x, t, out); err != nil {
		return "", nil, err
	}
	return out, nil, nil
}

// Render renders every task bound to stage for the payload, in execution
// order, without running anything. Each task's render stops when ctx ends
// or past opts.Limits.
func (x *Extension) Render(ctx context.Context, stage Stage, payload []byte, opts RenderOptions) ([]Rendered, error) {
	if !stage.Known() {
		return nil, EventInvalid.New("%s", stageProblem(string(stage)))
	}
	d, err := newPayloadData(stage, payload)
	if err != nil {
		return nil, err
	}
	sv, err := x.values(context.Background(), opts.Instance, nil, true)
	if err != nil {
		return nil, err
	}
	out := make([]Rendered, 0, len(x.stages[stage]))
	for _, t := range x.stages[stage] {
		body, vars, err := x.render(ctx, t, d, sv, opts)
		if err != nil {
			return nil, err
		}
		r := Rendered{Extension: x.Name, Stage: stage, Task: t.Label, TaskType: t.TaskType, Rendered: vars}
		if vars == nil {
			r.Rendered = jsonString(body)
		}
		out = append(out, r)
	}
	return out, nil
}

// jsonString encodes s as a JSON string without HTML escaping, so a
// rendered body reads as it was rendered.
func jsonString(s string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}
