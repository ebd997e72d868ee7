package wiring

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hostforge/hostforge/extensions"
)

// ExtensionInstances is extensions.instances: per extension name, the
// site's values of its inputs and configVars — a value written inline, or
// {vault: ITEM.FIELD}, a vault item's field read when a task runs (the
// only form an isPassword input takes):
//
//	instances:
//	  powerdns:
//	    zone: dc1.example.com
//	    ttl: 300
//	    apiKey: {vault: powerdns-api.password}
type ExtensionInstances map[string]map[string]InstanceValue

// InstanceValue is one value of extensions.instances.
type InstanceValue struct {
	// JSON is an inline value; Vault is ITEM.FIELD.
	JSON  json.RawMessage
	Vault string
}

// decodeNode reads the mapping of extensions to their values.
func (e *ExtensionInstances) decodeNode(path string, n *yaml.Node, lines map[string]int) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: %s: want a mapping of extension names to their values, got a %s", n.Line, path, kindName(n))
	}
	out := ExtensionInstances{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, vals := n.Content[i], n.Content[i+1]
		ext := join(path, k.Value)
		lines[ext] = k.Line
		if _, dup := out[k.Value]; dup {
			return fmt.Errorf("line %d: %s: extension given twice", k.Line, ext)
		}
		if vals.Kind == yaml.AliasNode {
			vals = vals.Alias
		}
		if vals.Kind != yaml.MappingNode {
			return fmt.Errorf("line %d: %s: want a mapping of input names to values, got a %s", vals.Line, ext, kindName(vals))
		}
		m := map[string]InstanceValue{}
		for j := 0; j+1 < len(vals.Content); j += 2 {
			ik, iv := vals.Content[j], vals.Content[j+1]
			key := join(ext, ik.Value)
			lines[key] = ik.Line
			if _, dup := m[ik.Value]; dup {
				return fmt.Errorf("line %d: %s: key given twice", ik.Line, key)
			}
			v, err := instanceValue(iv)
			if err != nil {
				return fmt.Errorf("line %d: %s: %v", ik.Line, key, err)
			}
			m[ik.Value] = v
		}
		out[k.Value] = m
	}
	*e = out
	return nil
}

// instanceValue reads a value: {vault: ITEM.FIELD}, or any YAML value as
// JSON.
func instanceValue(n *yaml.Node) (InstanceValue, error) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.MappingNode && len(n.Content) >= 2 && n.Content[0].Value == "vault" {
		if len(n.Content) != 2 || n.Content[1].Kind != yaml.ScalarNode || strings.TrimSpace(n.Content[1].Value) == "" {
			return InstanceValue{}, fmt.Errorf("a vault reference is {vault: ITEM.FIELD} and nothing else")
		}
		return InstanceValue{Vault: strings.TrimSpace(n.Content[1].Value)}, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return InstanceValue{}, err
	}
	b, err := json.Marshal(jsonable(v))
	if err != nil {
		return InstanceValue{}, fmt.Errorf("the value cannot be written as JSON: %v", err)
	}
	return InstanceValue{JSON: b}, nil
}

// jsonable turns YAML's map[string]any and map[any]any into JSON objects.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
	}
	return v
}

// Instances are the values as extension dispatch takes them.
func (e ExtensionInstances) Instances() extensions.Instances {
	if len(e) == 0 {
		return nil
	}
	out := make(extensions.Instances, len(e))
	for name, vals := range e {
		in := make(extensions.Instance, len(vals))
		for k, v := range vals {
			in[k] = extensions.SiteValue{Value: v.JSON, Vault: v.Vault}
		}
		out[name] = in
	}
	return out
}

// InstanceProblems checks extensions.instances against the loaded
// definitions (extensions.Extension.CheckInstance for each active one,
// each problem at its config key with its line), and names instances of
// extensions that are not loaded: missing values of required inputs,
// inline passwords, keys no definition declares.
func (c *Config) InstanceProblems(reg *extensions.Registry) extensions.Problems {
	var out extensions.Problems
	var inst ExtensionInstances
	if c.Extensions != nil {
		inst = c.Extensions.Instances
	}
	all := inst.Instances()
	for _, x := range reg.Extensions() {
		if !x.Active() {
			continue
		}
		for _, p := range x.CheckInstance(all[x.Name]) {
			p.Path = c.KeyLine(p.Path)
			out = append(out, p)
		}
	}
	names := make([]string, 0, len(inst))
	for n := range inst {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if x, ok := reg.Extension(n); !ok || !x.Active() {
			out = append(out, extensions.Problem{Path: c.KeyLine("extensions.instances." + n),
				Message: fmt.Sprintf("no active extension named %q is loaded from %s", n, c.Extensions.Definitions)})
		}
	}
	return out
}

// KeyLine is a config key with its line ("line 12: extensions.instances.x"),
// a missing key's parent's line when known.
func (c *Config) KeyLine(key string) string {
	for parent := key; parent != ""; {
		if line, ok := c.lines[parent]; ok {
			return fmt.Sprintf("line %d: %s", line, key)
		}
		i := strings.LastIndexAny(parent, ".[")
		if i < 0 {
			break
		}
		parent = parent[:i]
	}
	return key
}
