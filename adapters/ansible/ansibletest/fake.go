package ansibletest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hostforge/hostforge/adapters/ansible"
	"github.com/hostforge/hostforge/extensions/nunjucks"
)

// Fake is an ansible.Playbooks that interprets playbooks in process, as
// ansible-playbook would run them against localhost: the plays' tasks in
// order, with the extra-vars file's keys as variables and Jinja
// expressions rendered (through the Nunjucks renderer, with to_json and
// to_nice_json). It knows the modules the project's tests use —
// ansible.builtin.debug (msg), copy (content, dest), fail (msg) and pause
// (seconds) — and refuses any other as ansible-playbook refuses an unknown
// module. It checks what ansible-playbook checks before running: the
// inventory is YAML, the extra-vars file a JSON object, the playbook
// present. Exit statuses are ansible-playbook's: 0, 1 for an error, 2 for
// a failed task, 4 for a parse error. It passes Run, the contract the real
// ansible-playbook passes.
//
// An invocation in an execution environment (Container set) is run the
// same way, with paths under ansible.ContainerDir mapped to its Dir. It is
// safe for concurrent use.
type Fake struct {
	mu          sync.Mutex
	invocations []ansible.Invocation
}

// Invocations lists the invocations received, in order.
func (f *Fake) Invocations() []ansible.Invocation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ansible.Invocation(nil), f.invocations...)
}

// play is a play of a playbook.
type play struct {
	Name  string           `yaml:"name"`
	Hosts string           `yaml:"hosts"`
	Tasks []map[string]any `yaml:"tasks"`
}

// Play runs the invocation.
func (f *Fake) Play(ctx context.Context, inv ansible.Invocation) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	f.mu.Lock()
	f.invocations = append(f.invocations, inv)
	f.mu.Unlock()
	out := inv.Output
	if out == nil {
		out = io.Discard
	}
	local := func(p string) string {
		if inv.Container != nil && strings.HasPrefix(p, ansible.ContainerDir+"/") {
			p = filepath.Join(inv.Dir, strings.TrimPrefix(p, ansible.ContainerDir+"/"))
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(inv.Dir, p)
		}
		return p
	}
	var invDoc any
	if b, err := os.ReadFile(local(inv.Inventory)); err != nil || yaml.Unmarshal(b, &invDoc) != nil {
		fmt.Fprintf(out, "[WARNING]: Unable to parse %s as an inventory source\n", inv.Inventory)
	}
	vb, err := os.ReadFile(local(inv.ExtraVars))
	if err != nil {
		fmt.Fprintf(out, "ERROR! the file_name '%s' does not exist, or is not readable\n", local(inv.ExtraVars))
		return 1, nil
	}
	v, err := nunjucks.FromJSON(vb)
	vars, ok := v.(*nunjucks.Object)
	if err != nil || !ok {
		fmt.Fprintf(out, "ERROR! failed to combine variables, expected dicts but got a '%T'\n", v)
		return 1, nil
	}
	pb, err := os.ReadFile(local(inv.Playbook))
	if err != nil {
		fmt.Fprintf(out, "ERROR! the playbook: %s could not be found\n", inv.Playbook)
		return 1, nil
	}
	var plays []play
	if err := yaml.Unmarshal(pb, &plays); err != nil {
		fmt.Fprintf(out, "ERROR! We were unable to read either as JSON nor YAML: %v\n", err)
		return 4, nil
	}
	for _, p := range plays {
		fmt.Fprintf(out, "\nPLAY [%s] %s\n", p.Name, strings.Repeat("*", 20))
		for i, task := range p.Tasks {
			name, _ := task["name"].(string)
			if name == "" {
				name = fmt.Sprintf("task %d", i+1)
			}
			fmt.Fprintf(out, "\nTASK [%s] %s\n", name, strings.Repeat("*", 20))
			module, args, err := moduleOf(task)
			if err != nil {
				fmt.Fprintf(out, "ERROR! %v\n", err)
				return 4, nil
			}
			failed, err := f.run(ctx, module, args, vars, local, out)
			if err != nil {
				return 0, err
			}
			if failed != "" {
				msg, _ := json.Marshal(failed)
				fmt.Fprintf(out, "fatal: [localhost]: FAILED! => {\"changed\": false, \"msg\": %s}\n", msg)
				fmt.Fprintf(out, "\nPLAY RECAP %s\nlocalhost : ok=%d changed=0 unreachable=0 failed=1\n", strings.Repeat("*", 20), i)
				return 2, nil
			}
		}
	}
	fmt.Fprintf(out, "\nPLAY RECAP %s\nlocalhost : ok=%d changed=0 unreachable=0 failed=0\n", strings.Repeat("*", 20), len(plays))
	return 0, nil
}

// moduleOf finds a task's one module and its arguments.
func moduleOf(task map[string]any) (string, map[string]any, error) {
	var module string
	var args map[string]any
	for k, v := range task {
		if k == "name" {
			continue
		}
		m := strings.TrimPrefix(k, "ansible.builtin.")
		switch m {
		case "debug", "copy", "fail", "pause":
		default:
			return "", nil, fmt.Errorf("couldn't resolve module/action '%s' (this fake runs debug, copy, fail and pause)", k)
		}
		if module != "" {
			return "", nil, fmt.Errorf("conflicting action statements: %s, %s", module, m)
		}
		module = m
		args, _ = v.(map[string]any)
		if v != nil && args == nil {
			return "", nil, fmt.Errorf("%s takes a mapping of arguments in this fake", k)
		}
	}
	if module == "" {
		return "", nil, fmt.Errorf("no module/action detected in task")
	}
	return module, args, nil
}

// run runs one module and returns the failure message of a failed task.
func (f *Fake) run(ctx context.Context, module string, args map[string]any, vars *nunjucks.Object, local func(string) string, out io.Writer) (string, error) {
	arg := func(k string) (string, error) {
		v, ok := args[k]
		if !ok {
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return fmt.Sprint(v), nil
		}
		return render(ctx, s, vars)
	}
	switch module {
	case "debug":
		msg, err := arg("msg")
		if err != nil {
			return err.Error(), nil
		}
		b, _ := json.Marshal(msg)
		fmt.Fprintf(out, "ok: [localhost] => {\n    \"msg\": %s\n}\n", b)
	case "copy":
		content, err := arg("content")
		if err != nil {
			return err.Error(), nil
		}
		dest, err := arg("dest")
		if err != nil {
			return err.Error(), nil
		}
		if dest == "" {
			return "dest is required", nil
		}
		if err := os.WriteFile(local(dest), []byte(content), 0o644); err != nil {
			return fmt.Sprintf("Destination directory %s does not exist", filepath.Dir(dest)), nil
		}
		fmt.Fprintln(out, "changed: [localhost]")
	case "fail":
		msg, err := arg("msg")
		if err != nil {
			return err.Error(), nil
		}
		if msg == "" {
			msg = "Failed as requested from task"
		}
		return msg, nil
	case "pause":
		s, _ := arg("seconds")
		n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return fmt.Sprintf("seconds %q is not a number", s), nil
		}
		t := time.NewTimer(time.Duration(n * float64(time.Second)))
		defer t.Stop()
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-t.C:
		}
		fmt.Fprintln(out, "ok: [localhost]")
	}
	return "", nil
}

var jinjaFilters = strings.NewReplacer("| to_nice_json", "| dump(4)", "|to_nice_json", "|dump(4)", "| to_json", "| dump", "|to_json", "|dump")

var expression = regexp.MustCompile(`\{\{|\{%`)

// render renders a Jinja string the way Ansible's templating does for
// these modules, through the Nunjucks renderer.
func render(ctx context.Context, s string, vars *nunjucks.Object) (string, error) {
	if !expression.MatchString(s) {
		return s, nil
	}
	t, err := nunjucks.Parse(jinjaFilters.Replace(s))
	if err != nil {
		return "", fmt.Errorf("template error while templating string: %v", err)
	}
	out, err := t.Render(ctx, vars, nunjucks.Options{Strict: true})
	if err != nil {
		return "", fmt.Errorf("The task includes an option with an undefined variable: %v", err)
	}
	return out, nil
}
