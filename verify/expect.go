package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Cable is the NetBox record of one frontend interface and its cable.
type Cable struct {
	// Interface is the NetBox interface name.
	Interface string `json:"interface" yaml:"interface"`
	// MAC is the NetBox interface's MAC; it finds the interface in the
	// inventory (the kernel's name may differ from NetBox's).
	MAC string `json:"mac,omitempty" yaml:"mac,omitempty"`
	// Switch and Port are the cable peer: the switch device's name and its
	// physical port's name. Both empty when NetBox records no cable.
	Switch string `json:"switch,omitempty" yaml:"switch,omitempty"`
	Port   string `json:"port,omitempty" yaml:"port,omitempty"`
}

// Cabled reports whether NetBox records a cable to a switch port.
func (c Cable) Cabled() bool { return c.Switch != "" || c.Port != "" }

// Expectations is what NetBox says the host is. Nil sections are not checked.
type Expectations struct {
	Device string  `json:"device"`
	Cables []Cable `json:"cables,omitempty"`
	// SkipCableVerification skips the LLDP check (not the carrier check).
	SkipCableVerification bool `json:"skip_cable_verification,omitempty"`

	CPU    *CPUExpect    `json:"cpu,omitempty"`
	NICs   *NICExpect    `json:"nics,omitempty"`
	Disks  *DiskExpect   `json:"disks,omitempty"`
	Memory *MemoryExpect `json:"memory,omitempty"`
	BIOS   *BIOSExpect   `json:"bios,omitempty"`
	// GPUs are the expected GPU functions; checked only when CheckGPUs (an
	// empty list then asserts the host has none).
	GPUs      []GPUExpect `json:"gpus,omitempty"`
	CheckGPUs bool        `json:"check_gpus,omitempty"`
}

// CPUExpect is inspection_validation.cpu. Nil fields are not checked.
type CPUExpect struct {
	Architecture string `json:"architecture,omitempty"`
	Count        *int   `json:"count,omitempty"`
	Cores        *int   `json:"cores,omitempty"`
	Sockets      *int   `json:"sockets,omitempty"`
}

// NICExpect is inspection_validation.nics.
type NICExpect struct {
	Count        *int     `json:"count,omitempty"`
	Vendors      []string `json:"vendors,omitempty"`
	MinSpeedMbps *int     `json:"min_speed_mbps,omitempty"`
}

// DiskExpect is inspection_validation.disks.
type DiskExpect struct {
	Count     *int     `json:"count,omitempty"`
	Models    []string `json:"models,omitempty"`
	MinSizeGB *int     `json:"min_size_gb,omitempty"`
}

// MemoryExpect is inspection_validation.memory.
type MemoryExpect struct {
	PhysicalMB *int `json:"physical_mb,omitempty"`
	DIMMCount  *int `json:"dimm_count,omitempty"`
	DIMMSizeMB *int `json:"dimm_size_mb,omitempty"`
}

// BIOSExpect is inspection_validation.bios. A pattern ending in * matches by prefix.
type BIOSExpect struct {
	Allow []string `json:"allow,omitempty"`
	Block []string `json:"block,omitempty"`
}

// GPUExpect is one entry of inspection_validation.gpus.
type GPUExpect struct {
	VendorID string `json:"vendor_id"`
	DeviceID string `json:"device_id"`
	Count    int    `json:"count"`
	Name     string `json:"name,omitempty"`
}

// ExpectationsFrom builds expectations from the inspection_validation config
// context block (nil when absent) and the frontend cables. A malformed block
// is INSPECTION_VALIDATION_INVALID naming the key.
func ExpectationsFrom(device string, validation map[string]any, cables []Cable, skipCable bool) (Expectations, error) {
	exp := Expectations{Device: device, Cables: cables, SkipCableVerification: skipCable}
	r := reader{device: device}
	for _, key := range sortedKeys(validation) {
		v := validation[key]
		path := "config_context.inspection_validation." + key
		switch key {
		case "cpu":
			m := r.object(path, v, "architecture", "count", "cores", "sockets")
			if m == nil {
				break
			}
			exp.CPU = &CPUExpect{Architecture: r.str(path+".architecture", m["architecture"]),
				Count: r.count(path+".count", m["count"], 1), Cores: r.count(path+".cores", m["cores"], 1),
				Sockets: r.count(path+".sockets", m["sockets"], 1)}
		case "nics":
			m := r.object(path, v, "count", "vendors", "min_speed_mbps")
			if m == nil {
				break
			}
			exp.NICs = &NICExpect{Count: r.count(path+".count", m["count"], 1),
				Vendors:      r.strs(path+".vendors", m["vendors"], strings.ToLower),
				MinSpeedMbps: r.count(path+".min_speed_mbps", m["min_speed_mbps"], 1)}
		case "disks":
			m := r.object(path, v, "count", "models", "min_size_gb")
			if m == nil {
				break
			}
			exp.Disks = &DiskExpect{Count: r.count(path+".count", m["count"], 0),
				Models: r.strs(path+".models", m["models"], strings.TrimSpace), MinSizeGB: r.count(path+".min_size_gb", m["min_size_gb"], 1)}
		case "memory":
			m := r.object(path, v, "physical_mb", "dimm_count", "dimm_size_mb")
			if m == nil {
				break
			}
			exp.Memory = &MemoryExpect{PhysicalMB: r.count(path+".physical_mb", m["physical_mb"], 1),
				DIMMCount: r.count(path+".dimm_count", m["dimm_count"], 1), DIMMSizeMB: r.count(path+".dimm_size_mb", m["dimm_size_mb"], 1)}
		case "bios":
			m := r.object(path, v, "allow", "block")
			if m == nil {
				break
			}
			exp.BIOS = &BIOSExpect{Allow: r.strs(path+".allow", m["allow"], strings.TrimSpace), Block: r.strs(path+".block", m["block"], strings.TrimSpace)}
		case "gpus":
			exp.CheckGPUs = true
			exp.GPUs = r.gpus(path, v)
		default:
			r.fail(path, "is not a key inspection_validation knows (cpu, nics, disks, memory, bios, gpus)")
		}
		if r.err != nil {
			return Expectations{}, r.err
		}
	}
	for i, c := range cables {
		if strings.TrimSpace(c.Interface) == "" && c.MAC == "" {
			return Expectations{}, ValidationInvalid.New("device %s: cables[%d]: a frontend interface needs a name or a MAC", device, i)
		}
	}
	return exp, nil
}

// ExpectationsFile is the offline expectations format LoadExpectations reads.
type ExpectationsFile struct {
	Device                string         `json:"device" yaml:"device"`
	SkipCableVerification bool           `json:"skip_cable_verification" yaml:"skip_cable_verification"`
	Cables                []Cable        `json:"cables" yaml:"cables"`
	Validation            map[string]any `json:"validation" yaml:"validation"`
}

// LoadExpectations reads an expectations file (JSON or YAML; see the package
// doc). Unknown top-level keys are refused, so a typo never turns a check off.
func LoadExpectations(b []byte) (Expectations, error) {
	var f ExpectationsFile
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return Expectations{}, ValidationInvalid.Wrap(err, "expectations file is not valid JSON of the expectations format")
		}
	} else {
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(&f); err != nil {
			return Expectations{}, ValidationInvalid.Wrap(err, "expectations file is not valid YAML of the expectations format")
		}
	}
	if strings.TrimSpace(f.Device) == "" {
		return Expectations{}, ValidationInvalid.New("expectations file: device: missing")
	}
	return ExpectationsFrom(f.Device, f.Validation, f.Cables, f.SkipCableVerification)
}

// reader decodes the untyped config-context block, keeping the first error.
type reader struct {
	device string
	err    error
}

func (r *reader) fail(path, format string, args ...any) {
	if r.err == nil {
		r.err = ValidationInvalid.New("device %s: %s: %s", r.device, path, fmt.Sprintf(format, args...))
	}
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	if _, ok := number(v); ok {
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}

// object reads a nested object and refuses keys outside known.
func (r *reader) object(path string, v any, known ...string) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		r.fail(path, "is %s, want an object", typeName(v))
		return nil
	}
	for _, k := range sortedKeys(m) {
		found := false
		for _, kn := range known {
			found = found || k == kn
		}
		if !found {
			r.fail(path+"."+k, "is not a key of %s (want one of %s)", path, strings.Join(known, ", "))
			return nil
		}
	}
	return m
}

// number reads the numeric types JSON, YAML and Go callers produce.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case uint:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// count reads an optional whole number ≥ min.
func (r *reader) count(path string, v any, min int) *int {
	if v == nil {
		return nil
	}
	f, ok := number(v)
	if !ok || f != math.Trunc(f) || f < float64(min) || f > 1<<40 {
		r.fail(path, "is %s (%v), want a whole number ≥ %d", typeName(v), v, min)
		return nil
	}
	n := int(f)
	return &n
}

func (r *reader) str(path string, v any) string {
	if v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok || strings.TrimSpace(s) == "" {
		r.fail(path, "is %s, want a non-empty string", typeName(v))
		return ""
	}
	return strings.TrimSpace(s)
}

// strs reads an optional non-empty list of non-empty strings.
func (r *reader) strs(path string, v any, norm func(string) string) []string {
	if v == nil {
		return nil
	}
	var list []any
	switch x := v.(type) {
	case []any:
		list = x
	case []string:
		for _, s := range x {
			list = append(list, s)
		}
	default:
		r.fail(path, "is %s, want a list of strings", typeName(v))
		return nil
	}
	if len(list) == 0 {
		r.fail(path, "is an empty list; remove the key to skip the check")
		return nil
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok || strings.TrimSpace(s) == "" {
			r.fail(fmt.Sprintf("%s[%d]", path, i), "is %s, want a non-empty string", typeName(e))
			return nil
		}
		out = append(out, norm(strings.TrimSpace(s)))
	}
	return out
}

// gpus reads the list of {vendor_id, device_id, count, name}.
func (r *reader) gpus(path string, v any) []GPUExpect {
	list, ok := v.([]any)
	if !ok {
		if m, isMaps := v.([]map[string]any); isMaps {
			for _, e := range m {
				list = append(list, e)
			}
		} else {
			r.fail(path, "is %s, want a list of {vendor_id, device_id, count}", typeName(v))
			return nil
		}
	}
	out := []GPUExpect{}
	seen := map[string]bool{}
	for i, e := range list {
		p := fmt.Sprintf("%s[%d]", path, i)
		m := r.object(p, e, "vendor_id", "device_id", "count", "name")
		if m == nil {
			return nil
		}
		g := GPUExpect{VendorID: normPCIID(r.str(p+".vendor_id", m["vendor_id"])), DeviceID: normPCIID(r.str(p+".device_id", m["device_id"]))}
		if m["name"] != nil {
			g.Name = r.str(p+".name", m["name"])
		}
		c := r.count(p+".count", m["count"], 0)
		if r.err != nil {
			return nil
		}
		if g.VendorID == "" || g.DeviceID == "" || c == nil {
			r.fail(p, "needs vendor_id, device_id and count")
			return nil
		}
		if !isHexID(g.VendorID) || !isHexID(g.DeviceID) {
			r.fail(p, "vendor_id %q / device_id %q are not 4-digit hex PCI ids", g.VendorID, g.DeviceID)
			return nil
		}
		key := g.VendorID + ":" + g.DeviceID
		if seen[key] {
			r.fail(p, "lists %s twice", key)
			return nil
		}
		seen[key] = true
		g.Count = *c
		out = append(out, g)
	}
	return out
}

func isHexID(s string) bool {
	if len(s) != 4 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
