package extensions

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/extensions/nunjucks"
)

// validator walks a decoded definition and collects every problem.
type validator struct {
	problems Problems
	bound    map[Stage][]*BoundTask
	assets   map[string]string // asset name → assetType
	labels   map[string]string // asset label → name
}

func (v *validator) errf(path, format string, args ...any) {
	v.problems = append(v.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) warnf(path, format string, args ...any) {
	v.problems = append(v.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...), Warning: true})
}

func jsonType(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", x)
}

func key(path, k string) string     { return path + "." + k }
func idx(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// envelope finds the definition: the file itself, or the create-API
// envelope's "definition". It returns the definition object, its path and
// the extension's status.
func (v *validator) envelope(root any) (map[string]any, string, Status) {
	obj, ok := root.(map[string]any)
	if !ok {
		v.errf("$", "want a JSON object (an ExtensionDefinition), got %s", jsonType(root))
		return nil, "", ""
	}
	status := StatusActive
	if inner, ok := obj["definition"]; ok {
		def, ok := inner.(map[string]any)
		if !ok {
			v.errf("$.definition", "want an object (the ExtensionDefinition), got %s", jsonType(inner))
			return nil, "", ""
		}
		v.str(obj, "$", "name", true, true)
		for _, k := range []string{"label", "description"} {
			v.str(obj, "$", k, false, false)
		}
		if k, ok := v.str(obj, "$", "kind", false, false); ok && k != "" && k != "workflow" && k != "application" && k != "action" {
			v.warnf("$.kind", "%q is not an extension kind (workflow, application, action)", k)
		}
		if st, ok := v.status(obj, "$"); ok {
			status = st
		}
		v.unknown(obj, "$", "name", "label", "description", "kind", "definition", "status")
		return def, "$.definition", status
	}
	if st, ok := v.status(obj, "$"); ok {
		status = st
	}
	return obj, "$", status
}

func (v *validator) status(obj map[string]any, path string) (Status, bool) {
	s, ok := v.str(obj, path, "status", false, false)
	if !ok || s == "" {
		return "", false
	}
	switch st := Status(s); st {
	case StatusDraft, StatusActive, StatusArchived:
		return st, true
	}
	v.errf(key(path, "status"), "%q is not a status: want draft, active or archived", s)
	return "", false
}

// str reads a string field. required: absent is an error; nonEmpty: "" is
// an error. ok is false when absent or of another type.
func (v *validator) str(obj map[string]any, path, k string, required, nonEmpty bool) (string, bool) {
	x, present := obj[k]
	if !present {
		if required {
			v.errf(key(path, k), "missing (a string is required)")
		}
		return "", false
	}
	s, ok := x.(string)
	if !ok {
		v.errf(key(path, k), "want a string, got %s", jsonType(x))
		return "", false
	}
	if nonEmpty && strings.TrimSpace(s) == "" {
		v.errf(key(path, k), "must not be empty")
	}
	return s, true
}

// integer reads an integer field within [lo, hi].
func (v *validator) integer(obj map[string]any, path, k string, required bool, lo, hi int64) (int64, bool) {
	x, present := obj[k]
	if !present {
		if required {
			v.errf(key(path, k), "missing (an integer is required)")
		}
		return 0, false
	}
	n, ok := x.(json.Number)
	if !ok {
		v.errf(key(path, k), "want an integer, got %s", jsonType(x))
		return 0, false
	}
	i, err := n.Int64()
	if err != nil {
		v.errf(key(path, k), "want an integer, got %s", n)
		return 0, false
	}
	if i < lo || i > hi {
		v.errf(key(path, k), "%d is out of range [%d, %d]", i, lo, hi)
		return 0, false
	}
	return i, true
}

func (v *validator) boolean(obj map[string]any, path, k string) {
	if x, ok := obj[k]; ok {
		if _, ok := x.(bool); !ok {
			v.errf(key(path, k), "want a boolean, got %s", jsonType(x))
		}
	}
}

// array reads an array of objects.
func (v *validator) array(obj map[string]any, path, k string, required bool) ([]map[string]any, bool) {
	x, present := obj[k]
	if !present {
		if required {
			v.warnf(key(path, k), "missing (MetalSoft requires an array here)")
		}
		return nil, false
	}
	arr, ok := x.([]any)
	if !ok {
		v.errf(key(path, k), "want an array, got %s", jsonType(x))
		return nil, false
	}
	out := make([]map[string]any, 0, len(arr))
	for i, it := range arr {
		o, ok := it.(map[string]any)
		if !ok {
			v.errf(idx(key(path, k), i), "want an object, got %s", jsonType(it))
			out = append(out, nil)
			continue
		}
		out = append(out, o)
	}
	return out, true
}

// unknown warns about fields nobody reads: a typo loses a setting silently.
func (v *validator) unknown(obj map[string]any, path string, known ...string) {
	for _, k := range sortedKeys(obj) {
		found := false
		for _, kk := range known {
			if k == kk {
				found = true
				break
			}
		}
		if !found {
			msg := "unknown field, ignored"
			if near := nearest(k, known); near != "" && near != k {
				msg += "; did you mean " + quote(near) + "?"
			}
			v.warnf(key(path, k), "%s", msg)
		}
	}
}

var definitionFields = []string{"kind", "schemaVersion", "name", "label", "extensionType", "vendor", "extensionVersion",
	"description", "icon", "dependencies", "inputs", "outputs", "infrastructure", "assets", "configVars",
	"onCreate", "onEdit", "onDelete", "actions", "onAssetChange", "status"}

func (v *validator) definition(def map[string]any, path string) {
	if k, ok := v.str(def, path, "kind", true, false); ok && k != "ExtensionDefinition" {
		v.errf(key(path, "kind"), "%q: want \"ExtensionDefinition\"", k)
	}
	if s, ok := v.str(def, path, "schemaVersion", true, false); ok && s != "1.1" {
		v.errf(key(path, "schemaVersion"), "%q: want \"1.1\", the schema this SDK reads", s)
	}
	v.str(def, path, "name", true, true)
	for _, k := range []string{"label", "vendor", "icon", "extensionVersion", "extensionType"} {
		if _, ok := def[k]; !ok {
			v.warnf(key(path, k), "missing (MetalSoft requires it)")
			continue
		}
		v.str(def, path, k, false, false)
	}
	v.str(def, path, "description", false, false)
	if t, ok := def["extensionType"].(string); ok && t != "workflow" && t != "application" {
		v.warnf(key(path, "extensionType"), "%q is not an extension type (workflow, application)", t)
	}
	if d, ok := def["dependencies"]; !ok {
		v.warnf(key(path, "dependencies"), "missing (MetalSoft requires {controllerVersion})")
	} else if dm, ok := d.(map[string]any); !ok {
		v.errf(key(path, "dependencies"), "want an object, got %s", jsonType(d))
	} else {
		v.str(dm, key(path, "dependencies"), "controllerVersion", false, false)
		if ot, ok := dm["osTemplates"]; ok {
			if arr, ok := ot.([]any); !ok {
				v.errf(key(path, "dependencies.osTemplates"), "want an array of strings, got %s", jsonType(ot))
			} else {
				for i, s := range arr {
					if _, ok := s.(string); !ok {
						v.errf(idx(key(path, "dependencies.osTemplates"), i), "want a string, got %s", jsonType(s))
					}
				}
			}
		}
	}
	v.inputs(def, path, "inputs", true)
	v.inputs(def, path, "configVars", false)
	if outs, ok := v.array(def, path, "outputs", true); ok {
		for i, o := range outs {
			if o == nil {
				continue
			}
			p := idx(key(path, "outputs"), i)
			v.str(o, p, "name", true, true)
			for _, k := range []string{"label", "outputType", "template"} {
				v.str(o, p, k, false, false)
			}
		}
	}
	v.assetList(def, path)
	for _, hook := range []string{"onCreate", "onEdit", "onDelete"} {
		v.hook(def, path, hook, false)
	}
	v.hook(def, path, "onAssetChange", true)
	v.unknown(def, path, definitionFields...)
}

var inputTypes = []string{"ExtensionInputString", "ExtensionInputInteger", "ExtensionInputBoolean",
	"ExtensionInputServerType", "ExtensionInputOsTemplate", "ExtensionInputNetworkProfile"}

func (v *validator) inputs(def map[string]any, path, k string, required bool) {
	ins, ok := v.array(def, path, k, required)
	if !ok {
		return
	}
	seen := map[string]bool{}
	for i, in := range ins {
		if in == nil {
			continue
		}
		p := idx(key(path, k), i)
		name, _ := v.str(in, p, "name", true, true)
		if name != "" && seen[name] {
			v.errf(key(p, "name"), "%q is already the name of another entry of %s", name, k)
		}
		seen[name] = true
		v.str(in, p, "label", false, false)
		v.str(in, p, "helpText", false, false)
		if t, ok := v.str(in, p, "inputType", true, false); ok && !contains(inputTypes, t) {
			msg := fmt.Sprintf("%q is not an input type (%s)", t, strings.Join(inputTypes, ", "))
			if near := nearest(t, inputTypes); near != "" {
				msg = fmt.Sprintf("%q is not an input type: did you mean %q?", t, near)
			}
			v.warnf(key(p, "inputType"), "%s", msg)
		}
		for _, b := range []string{"setOnly", "hidden", "isPassword"} {
			v.boolean(in, p, b)
		}
		v.passwordLength(in, p, k, name)
	}
}

// passwordLength refuses the value of an isPassword input or configVar —
// a secret the site chose — shorter than hostforge.MinSecretLen
// characters (published factory defaults are exempt).
func (v *validator) passwordLength(in map[string]any, path, k, name string) {
	if pw, _ := in["isPassword"].(bool); !pw {
		return
	}
	dv, ok := in["defaultValue"]
	if !ok || dv == nil || dv == "" {
		return
	}
	s, ok := dv.(string)
	if !ok {
		b, _ := json.Marshal(dv)
		s = string(b)
	}
	what := "an isPassword input"
	if k == "configVars" {
		what = "an isPassword configVar"
	}
	if err := hostforge.CheckChosenSecret(fmt.Sprintf("%s (%s)", what, name), s); err != nil {
		f, _ := hostforge.AsFailure(err)
		v.errf(key(path, "defaultValue"), "%s: %s (published factory defaults such as calvin are exempt)", f.Code, f.Message)
	}
}

var assetTypes = []string{"Bundle", "AnsibleBundle", "OciImage"}

func (v *validator) assetList(def map[string]any, path string) {
	v.assets, v.labels = map[string]string{}, map[string]string{}
	as, ok := v.array(def, path, "assets", true)
	if !ok {
		return
	}
	for i, a := range as {
		if a == nil {
			continue
		}
		p := idx(key(path, "assets"), i)
		name, _ := v.str(a, p, "name", true, true)
		label, _ := v.str(a, p, "label", false, false)
		t, _ := v.str(a, p, "assetType", false, false)
		if t != "" && !contains(assetTypes, t) {
			v.warnf(key(p, "assetType"), "%q is not an asset type (%s)", t, strings.Join(assetTypes, ", "))
		}
		u, _ := v.str(a, p, "url", true, true)
		if u != "" {
			// An absolute URL, or a local path (a relative one is read
			// from the definition file's directory).
			if pu, err := url.Parse(u); (err != nil || pu.Scheme == "") && !localPath(u) {
				v.errf(key(p, "url"), "%q is neither an absolute URL nor a local path", u)
			}
		}
		sum, hasSum := v.str(a, p, "sha256", false, false)
		if hasSum && !isHex(sum, 64) {
			v.errf(key(p, "sha256"), "want 64 hexadecimal digits")
		}
		v.boolean(a, p, "allowHttp")
		allowHTTP, _ := a["allowHttp"].(bool)
		v.download(p, t, u, hasSum && sum != "", allowHTTP)
		for _, k := range []string{"repositoryRegistry", "namespaceRegistry", "tagRegistry"} {
			v.str(a, p, k, false, false)
		}
		if name != "" {
			if _, dup := v.assets[name]; dup {
				v.errf(key(p, "name"), "%q names two assets: task references would be ambiguous", name)
			}
			v.assets[name] = t
		}
		if label != "" {
			v.labels[label] = name
		}
		v.unknown(a, p, "label", "name", "assetType", "url", "requiredAssets", "repositoryRegistry", "namespaceRegistry", "tagRegistry", "sha256", "allowHttp")
	}
}

// download checks what an asset hostforge downloads must prove (a bundle
// at an http(s) url; an OciImage is the container runtime's to pull): its
// sha256, and https unless the asset opts in to plain http with
// allowHttp. The runner refuses the same again before fetching anything;
// refusing here makes the definition fail where it is written.
func (v *validator) download(path, assetType, raw string, hasSum, allowHTTP bool) {
	if assetType == "OciImage" || raw == "" {
		return
	}
	pu, err := url.Parse(raw)
	if err != nil {
		return
	}
	scheme := strings.ToLower(pu.Scheme)
	if scheme != "http" && scheme != "https" {
		return
	}
	shown := (&url.URL{Scheme: scheme, Host: pu.Host, Path: pu.Path}).String()
	if !hasSum {
		v.errf(key(path, "sha256"), "missing: the bundle at %s is downloaded, and a download must prove what it is: give its SHA-256 (64 hexadecimal digits)", shown)
	}
	if scheme == "http" && !allowHTTP {
		v.errf(key(path, "url"), "%s is plain http: serve the bundle over https, or opt this asset in with \"allowHttp\": true (its sha256 still verifies it; every use is logged)", shown)
	}
}

// hook validates onAssetChange (asset stages) or onCreate/onEdit/onDelete
// (preDeploy, postDeploy), concatenating repeated stage entries.
func (v *validator) hook(def map[string]any, path, hook string, assetStages bool) {
	entries, ok := v.array(def, path, hook, false)
	if !ok {
		return
	}
	hp := key(path, hook)
	labels := map[string]map[string]string{} // stage → label → first path
	if assetStages && v.bound == nil {
		v.bound = map[Stage][]*BoundTask{}
	}
	for i, e := range entries {
		if e == nil {
			continue
		}
		p := idx(hp, i)
		stage, ok := v.str(e, p, "stage", true, true)
		validStage := false
		if ok && stage != "" {
			if assetStages {
				if msg := stageProblem(stage); msg != "" {
					v.errf(key(p, "stage"), "%s", msg)
				} else {
					validStage = true
				}
			} else if !contains(lifecycleStages, stage) {
				msg := fmt.Sprintf("%q is not a %s stage: want preDeploy or postDeploy", stage, hook)
				if near := nearest(stage, lifecycleStages); near != "" {
					msg = fmt.Sprintf("%q is not a %s stage: did you mean %q?", stage, hook, near)
				}
				v.errf(key(p, "stage"), "%s", msg)
			} else {
				validStage = true
			}
		}
		v.unknown(e, p, "stage", "tasks")
		tasks, ok := v.array(e, p, "tasks", false)
		if _, present := e["tasks"]; !present {
			v.errf(key(p, "tasks"), "missing (an array of tasks is required)")
		}
		if !ok {
			continue
		}
		if labels[stage] == nil {
			labels[stage] = map[string]string{}
		}
		for j, t := range tasks {
			if t == nil {
				continue
			}
			tp := idx(key(p, "tasks"), j)
			bt := v.task(t, tp)
			if bt == nil {
				continue
			}
			if first, dup := labels[stage][bt.Label]; dup {
				v.errf(key(tp, "label"), "%q is already the label of %s in stage %q: labels must be unique within a stage (they identify deliveries)", bt.Label, first, stage)
				continue
			}
			labels[stage][bt.Label] = tp
			if assetStages && validStage {
				bt.Index = len(v.bound[Stage(stage)])
				v.bound[Stage(stage)] = append(v.bound[Stage(stage)], bt)
			}
		}
	}
}

var taskTypes = []string{string(TaskAnsible), string(TaskWebhook), string(TaskSSH)}

// task validates one task and returns it bound, or nil when the task
// cannot be read at all.
func (v *validator) task(t map[string]any, path string) *BoundTask {
	bt := &BoundTask{Path: path}
	label, _ := v.str(t, path, "label", true, true)
	bt.Label = label
	tt, ok := v.str(t, path, "taskType", true, true)
	if ok && tt != "" && !contains(taskTypes, tt) {
		msg := fmt.Sprintf("unknown task type %q: want %s", tt, strings.Join(taskTypes, ", "))
		if near := nearest(tt, taskTypes); near != "" {
			msg = fmt.Sprintf("unknown task type %q: did you mean %q?", tt, near)
		}
		v.errf(key(path, "taskType"), "%s", msg)
		ok = false
	}
	bt.TaskType = TaskType(tt)
	if fp, present := v.str(t, path, "failurePolicy", false, false); present {
		switch FailurePolicy(fp) {
		case FailStop, FailContinue:
			bt.FailurePolicy = FailurePolicy(fp)
		default:
			v.errf(key(path, "failurePolicy"), "%q: want \"fail\" (stop this extension's remaining tasks) or \"continue\"", fp)
		}
	}
	v.boolean(t, path, "includeSecrets")
	bt.IncludeSecrets, _ = t["includeSecrets"].(bool)
	v.unknown(t, path, "label", "taskType", "options", "failurePolicy", "includeSecrets")
	opt, present := t["options"]
	op := key(path, "options")
	if !present {
		v.errf(op, "missing (the task's options object is required)")
		return bt
	}
	om, isObj := opt.(map[string]any)
	if !isObj {
		v.errf(op, "want an object, got %s", jsonType(opt))
		return bt
	}
	bt.Options, _ = json.Marshal(om)
	if !ok {
		return bt
	}
	switch bt.TaskType {
	case TaskWebhook:
		bt.webhook = v.webhook(om, op, bt)
	case TaskSSH:
		bt.ssh = v.ssh(om, op, bt)
	case TaskAnsible:
		bt.ansible = v.ansible(om, op)
	}
	return bt
}

var methods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"}

func (v *validator) webhook(o map[string]any, path string, bt *BoundTask) *WebhookOptions {
	var w WebhookOptions
	if e, ok := v.str(o, path, "endpoint", true, true); ok && e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.errf(key(path, "endpoint"), "%q is not an absolute http or https URL", e)
		}
		w.Endpoint = e
	}
	if m, ok := v.str(o, path, "method", true, true); ok && m != "" {
		w.Method = strings.ToUpper(m)
		if !contains(methods, w.Method) {
			v.errf(key(path, "method"), "%q: want one of %s", m, strings.Join(methods, ", "))
		}
	}
	if tpl, ok := v.str(o, path, "requestTemplate", true, false); ok {
		w.RequestTemplate = tpl
		bt.template = v.template(tpl, key(path, "requestTemplate"))
	}
	if h, ok := o["headers"]; ok {
		hm, ok := h.(map[string]any)
		if !ok {
			v.errf(key(path, "headers"), "want an object of header names to strings, got %s", jsonType(h))
		} else {
			w.Headers = map[string]string{}
			for _, k := range sortedKeys(hm) {
				s, ok := hm[k].(string)
				if !ok {
					v.errf(key(key(path, "headers"), k), "want a string, got %s", jsonType(hm[k]))
					continue
				}
				if !validHeaderName(k) {
					v.errf(key(key(path, "headers"), k), "%q is not a valid HTTP header name", k)
				}
				if strings.ContainsAny(s, "\r\n") {
					v.errf(key(key(path, "headers"), k), "a header value must not contain a line break")
				}
				w.Headers[k] = s
			}
		}
	}
	if s, ok := o["expectedResponseStatuses"]; ok {
		arr, ok := s.([]any)
		if !ok {
			v.errf(key(path, "expectedResponseStatuses"), "want an array of HTTP status codes, got %s", jsonType(s))
		}
		for i, x := range arr {
			n, ok := x.(json.Number)
			f, err := n.Float64() // MetalSoft's SDK types these as floats: 200.0 is 200
			c := int64(f)
			if !ok || err != nil || float64(c) != f || c < 100 || c > 599 {
				v.errf(idx(key(path, "expectedResponseStatuses"), i), "want an HTTP status code (100-599), got %v", x)
				continue
			}
			w.ExpectedResponseStatuses = append(w.ExpectedResponseStatuses, int(c))
		}
	}
	if n, ok := v.integer(o, path, "timeout", false, 1, 24*3600); ok {
		w.Timeout = int(n)
	}
	v.boolean(o, path, "insecureSkipVerify")
	w.InsecureSkipVerify, _ = o["insecureSkipVerify"].(bool)
	w.SigningSecret, _ = v.str(o, path, "signingSecret", false, true)
	if n, ok := v.integer(o, path, "retries", false, 0, 10); ok {
		w.Retries = int(n)
	}
	v.unknown(o, path, "endpoint", "method", "headers", "requestTemplate", "expectedResponseStatuses", "timeout", "insecureSkipVerify", "signingSecret", "retries")
	return &w
}

func (v *validator) ssh(o map[string]any, path string, bt *BoundTask) *SSHOptions {
	var s SSHOptions
	s.Host, _ = v.str(o, path, "host", true, true)
	if n, ok := v.integer(o, path, "port", true, 1, 65535); ok {
		s.Port = int(n)
	}
	if n, ok := v.integer(o, path, "timeout", true, 1, 24*3600); ok {
		s.Timeout = int(n)
	}
	if tpl, ok := v.str(o, path, "commandTemplate", true, true); ok {
		s.CommandTemplate = tpl
		bt.template = v.template(tpl, key(path, "commandTemplate"))
	}
	s.Username, _ = v.str(o, path, "username", false, false)
	s.Password, _ = v.str(o, path, "password", false, false)
	s.PrivateKeySecret, _ = v.str(o, path, "privateKeySecret", false, true)
	v.unknown(o, path, "host", "port", "username", "password", "timeout", "commandTemplate", "privateKeySecret")
	return &s
}

func (v *validator) ansible(o map[string]any, path string) *AnsibleOptions {
	var a AnsibleOptions
	if name, ok := v.str(o, path, "asset", true, true); ok && name != "" {
		a.Asset = name
		v.assetRef(name, key(path, "asset"), "")
	}
	a.Playbook, _ = v.str(o, path, "playbook", true, true)
	if n, ok := v.integer(o, path, "executionTimeout", false, 1, 7*24*3600); ok {
		a.ExecutionTimeout = int(n)
	}
	if n, ok := v.integer(o, path, "executionTimeoutTick", false, 1, 24*3600); ok {
		a.ExecutionTimeoutTick = int(n)
	}
	a.Version, _ = v.str(o, path, "version", false, false)
	if ee, ok := v.str(o, path, "ee", false, true); ok && ee != "" {
		a.EE = ee
		v.assetRef(ee, key(path, "ee"), "OciImage")
	}
	if _, ok := o["taskType"]; ok {
		v.warnf(key(path, "taskType"), "the task type belongs beside label, not in options; ignored")
		delete(o, "taskType")
	}
	v.unknown(o, path, "asset", "playbook", "executionTimeout", "executionTimeoutTick", "version", "ee")
	return &a
}

// assetRef checks that name is one of assets[].name (of type want, when given).
func (v *validator) assetRef(name, path, want string) {
	t, ok := v.assets[name]
	if !ok {
		msg := fmt.Sprintf("%q does not name an asset (assets[].name)", name)
		if byLabel, ok := v.labels[name]; ok && byLabel != "" {
			msg += fmt.Sprintf(": it is the label of the asset named %q; tasks reference assets by name", byLabel)
		} else if near := nearest(name, sortedKeys(v.assets)); near != "" {
			msg += fmt.Sprintf("; did you mean %q?", near)
		} else if len(v.assets) == 0 {
			msg += "; the definition has no assets"
		} else {
			msg += "; the assets are " + strings.Join(sortedKeys(v.assets), ", ")
		}
		v.errf(path, "%s", msg)
		return
	}
	if want != "" && t != "" && t != want {
		v.errf(path, "asset %q is a %s, want an %s", name, t, want)
	}
}

// template parses a template; its errors carry the line and column.
func (v *validator) template(src, path string) *nunjucks.Template {
	t, err := nunjucks.Parse(src)
	if err != nil {
		v.errf(path, "the template does not parse: %v", err)
		return nil
	}
	return t
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c <= ' ' || c >= 0x7f || strings.ContainsRune(`()<>@,;:\"/[]?={}`, c) {
			return false
		}
	}
	return true
}

// localPath reports whether an asset url is a local file path: no scheme,
// no control characters.
func localPath(s string) bool {
	if strings.TrimSpace(s) != s || strings.Contains(s, "://") {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
