package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/extensions/nunjucks"
)

// SiteValue is a site's value for one input or configVar of an extension
// (the config's extensions.instances.NAME.KEY): inline, or a reference to
// a vault item's field, read when a task runs. An isPassword input's value
// is only ever a vault reference.
type SiteValue struct {
	// Value is an inline value (JSON).
	Value json.RawMessage `json:"value,omitempty"`
	// Vault is "ITEM.FIELD": the field of the vault item (the item's name
	// is everything before the last dot).
	Vault string `json:"vault,omitempty"`
}

// VaultRef splits Vault into the item's name and the field.
func (v SiteValue) VaultRef() (item, field string, ok bool) {
	i := strings.LastIndexByte(v.Vault, '.')
	if i <= 0 || i == len(v.Vault)-1 {
		return "", "", false
	}
	return v.Vault[:i], v.Vault[i+1:], true
}

// Instance is a site's values for one extension, by input or configVar
// name (a name both declare gets the value in both).
type Instance map[string]SiteValue

// Instances are the site's values by extension name: the config's
// extensions.instances.
type Instances map[string]Instance

// ItemReader reads a vault item's fields (the file vault is one).
type ItemReader interface {
	Item(ctx context.Context, name string) (map[string]string, error)
}

// InstanceKey is the config key of an extension's site value.
func InstanceKey(extension, name string) string {
	return "extensions.instances." + extension + "." + name
}

// declared is an input or configVar by name; an entry both declare is
// one value for both.
type declared struct {
	in       Input
	input    bool // declared in inputs
	config   bool // declared in configVars
	password bool
}

func (x *Extension) declaredInputs() map[string]*declared {
	out := map[string]*declared{}
	add := func(ins []Input, input bool) {
		for _, in := range ins {
			if in.Name == "" {
				continue
			}
			d := out[in.Name]
			if d == nil {
				d = &declared{in: in}
				out[in.Name] = d
			}
			d.input, d.config = d.input || input, d.config || !input
			d.password = d.password || in.IsPassword
		}
	}
	add(x.Definition.Inputs, true)
	add(x.Definition.ConfigVars, false)
	return out
}

// Fires reports whether the extension binds any task to a stage.
func (x *Extension) Fires() bool {
	for _, ts := range x.stages {
		if len(ts) > 0 {
			return true
		}
	}
	return false
}

// CheckInstance checks a site's values against the extension's inputs and
// configVars, each problem at its config key
// (extensions.instances.NAME.KEY): a key the definition does not declare,
// an isPassword value given inline (it must be a vault reference, so the
// config file holds no secret), a vault reference that is not ITEM.FIELD,
// an inline value of the wrong JSON type for an integer, boolean or string
// input, and — for an extension that binds tasks to stages — a required
// input (one without a defaultValue) given no value.
func (x *Extension) CheckInstance(in Instance) Problems {
	var out Problems
	decl := x.declaredInputs()
	for _, name := range sortedKeys(in) {
		v, key := in[name], InstanceKey(x.Name, name)
		d, ok := decl[name]
		switch {
		case !ok:
			out = append(out, Problem{Path: key, Message: fmt.Sprintf("extension %s declares no input or configVar %q (it declares %s)", x.Name, name, declaredList(decl))})
			continue
		case v.Vault != "" && len(v.Value) > 0:
			out = append(out, Problem{Path: key, Message: "give an inline value or a vault reference, not both"})
			continue
		case v.Vault != "":
			if _, _, ok := v.VaultRef(); !ok {
				out = append(out, Problem{Path: key, Message: fmt.Sprintf("vault: %q: want ITEM.FIELD, the vault item's name and its field", v.Vault)})
			}
			continue
		case d.password:
			out = append(out, Problem{Path: key, Message: fmt.Sprintf("%s is an isPassword input of extension %s: its value must be a vault reference ({vault: ITEM.FIELD}), never written in the config", name, x.Name)})
			continue
		}
		if msg := typeProblem(d.in.InputType, v.Value); msg != "" {
			out = append(out, Problem{Path: key, Message: msg})
		}
	}
	if !x.Fires() {
		return out
	}
	for _, name := range sortedKeys(decl) {
		d := decl[name]
		if _, ok := in[name]; ok || len(d.in.DefaultValue) > 0 && string(d.in.DefaultValue) != "null" {
			continue
		}
		kind := "input"
		if !d.input {
			kind = "configVar"
		}
		out = append(out, Problem{Path: InstanceKey(x.Name, name), Message: fmt.Sprintf("missing: %s %q of extension %s has no defaultValue, so the site must give it (its tasks would render it empty)", kind, name, x.Name)})
	}
	return out
}

func declaredList(decl map[string]*declared) string {
	if len(decl) == 0 {
		return "none"
	}
	return strings.Join(sortedKeys(decl), ", ")
}

// typeProblem checks an inline value against the input's type; "" when it
// fits (or the type takes anything).
func typeProblem(inputType string, raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "the value is not JSON: " + err.Error()
	}
	switch inputType {
	case "ExtensionInputInteger":
		if f, ok := v.(float64); !ok || f != math.Trunc(f) {
			return fmt.Sprintf("want a whole number for an %s, got %s", inputType, raw)
		}
	case "ExtensionInputBoolean":
		if _, ok := v.(bool); !ok {
			return fmt.Sprintf("want true or false for an %s, got %s", inputType, raw)
		}
	case "ExtensionInputString":
		if _, ok := v.(string); !ok {
			return fmt.Sprintf("want a string for an %s, got %s", inputType, raw)
		}
	}
	return ""
}

// siteValues are an extension's input and configVar values for one run:
// defaults overlaid by the site's values, and the values that are
// secrets (isPassword), for scrubbing.
type siteValues struct {
	inputs, config *nunjucks.Object
	secrets        []string
}

// PasswordPlaceholder is what a dry run renders for an isPassword value:
// the vault is not read, and no secret is printed.
func PasswordPlaceholder(extension, name string) string {
	return "[secret " + InstanceKey(extension, name) + "]"
}

// values builds the extension's values. With dry set, isPassword values
// are PasswordPlaceholder and nothing is read; otherwise vault references
// are read through r.
func (x *Extension) values(ctx context.Context, in Instance, r ItemReader, dry bool) (*siteValues, error) {
	sv := &siteValues{}
	if len(x.Definition.Inputs) == 0 && len(x.Definition.ConfigVars) == 0 {
		return sv, nil
	}
	decl := x.declaredInputs()
	resolved := map[string]any{}
	for _, name := range sortedKeys(decl) {
		d := decl[name]
		v, given := in[name]
		var val any
		switch {
		case dry && d.password:
			val = PasswordPlaceholder(x.Name, name)
		case given && v.Vault != "":
			s, err := readVault(ctx, r, x.Name, name, v)
			if err != nil {
				return nil, err
			}
			val = s
		case given:
			nv, err := nunjucks.FromJSON(v.Value)
			if err != nil {
				return nil, RunnerConfigInvalid.Wrap(err, "%s: the value is not JSON", InstanceKey(x.Name, name))
			}
			val = nv
		case len(d.in.DefaultValue) > 0:
			nv, err := nunjucks.FromJSON(d.in.DefaultValue)
			if err != nil {
				continue
			}
			val = nv
		default:
			continue
		}
		if s, ok := val.(string); ok && d.password && !dry && len(s) >= 4 {
			sv.secrets = append(sv.secrets, s)
		}
		resolved[name] = val
	}
	sort.Slice(sv.secrets, func(i, j int) bool { return len(sv.secrets[i]) > len(sv.secrets[j]) })
	build := func(ins []Input) *nunjucks.Object {
		if len(ins) == 0 {
			return nil
		}
		o := nunjucks.NewObject(len(ins))
		for _, in := range ins {
			if v, ok := resolved[in.Name]; ok {
				o.Set(in.Name, v)
			}
		}
		return o
	}
	sv.inputs, sv.config = build(x.Definition.Inputs), build(x.Definition.ConfigVars)
	return sv, nil
}

// readVault reads a vault reference's field.
func readVault(ctx context.Context, r ItemReader, extension, name string, v SiteValue) (string, error) {
	key := InstanceKey(extension, name)
	item, field, ok := v.VaultRef()
	if !ok {
		return "", RunnerConfigInvalid.New("%s: vault: %q: want ITEM.FIELD", key, v.Vault)
	}
	if r == nil {
		return "", SecretUnavailable.New("%s names the vault item %s, but no vault is configured (vault.path, or --vault)", key, item)
	}
	fields, err := r.Item(ctx, item)
	if err != nil {
		if errors.Is(err, hostforge.ErrNotFound) {
			return "", SecretUnavailable.New("%s: the vault has no item %s", key, item)
		}
		if ctx.Err() != nil {
			return "", hostforge.Classified(ctx.Err())
		}
		return "", SecretUnavailable.Wrap(err, "%s: reading the vault item %s", key, item)
	}
	s, ok := fields[field]
	if !ok {
		return "", SecretUnavailable.New("%s: the vault item %s has no field %s", key, item, field)
	}
	// An isPassword value is a secret the site chose: at least
	// hostforge.MinSecretLen characters.
	if err := hostforge.CheckChosenSecret(fmt.Sprintf("the isPassword value %s (vault item %s, field %s)", key, item, field), s); err != nil {
		return "", err
	}
	return s, nil
}
