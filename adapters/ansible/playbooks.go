package ansible

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/hostforge/hostforge/internal/childenv"
)

// Invocation is one run of ansible-playbook, as MetalSoft runs it:
//
//	cd Dir && ansible-playbook -i inventory.yml PLAYBOOK -e @variables.json
type Invocation struct {
	// Dir is the working directory: a copy of the bundle, with the
	// inventory and the extra-vars file written into it.
	Dir string
	// Playbook is the playbook's path relative to Dir.
	Playbook string
	// Inventory and ExtraVars are the inventory's and the extra-vars
	// file's paths relative to Dir (inventory.yml, variables.json).
	Inventory, ExtraVars string
	// Env is the settings the run gets (ANSIBLE_* and PYTHONUNBUFFERED),
	// as NAME=value. Exec adds PATH, HOME and LANG of the worker and
	// nothing else of its environment.
	Env []string
	// Output receives stdout and stderr together.
	Output io.Writer
	// Container runs the playbook inside an execution-environment image;
	// nil runs it on this host.
	Container *Container
}

// Container is an execution environment: ansible-playbook inside Image,
// run with Runtime (podman or docker), Dir mounted at ContainerDir.
type Container struct {
	Runtime string
	Image   string
	// Name names the container, so an abort can remove it.
	Name string
}

// ContainerDir is where an execution environment sees the invocation's Dir.
const ContainerDir = "/runner"

// Playbooks runs ansible-playbook. Exec runs the real one;
// ansibletest.Fake interprets the few modules the project's tests use;
// ansibletest.Run is the contract both pass.
type Playbooks interface {
	// Play runs the invocation and returns its exit status. It returns an
	// error only when the program could not be started, or when ctx ended
	// first: the process and its children are then killed, and ctx's
	// error is returned.
	Play(ctx context.Context, inv Invocation) (exit int, err error)
}

// ErrNoAnsible is Exec's error when ansible-playbook is not installed.
var ErrNoAnsible = errors.New("ansible-playbook is not installed")

// Exec runs the real ansible-playbook.
type Exec struct {
	// Path is the ansible-playbook program ("ansible-playbook" in PATH
	// when empty).
	Path string
}

// runtimeEnv are the variables a container runtime's client reads to
// find its service, its configuration and its registry credentials.
var runtimeEnv = []string{"XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY",
	"CONTAINER_HOST", "CONTAINERS_CONF", "CONTAINERS_REGISTRIES_CONF", "REGISTRY_AUTH_FILE", "TMPDIR"}

// Play runs ansible-playbook in its own process group, killed with it
// when ctx ends.
func (e Exec) Play(ctx context.Context, inv Invocation) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	args := []string{"-i", inv.Inventory, inv.Playbook, "-e", "@" + inv.ExtraVars}
	var cmd *exec.Cmd
	if c := inv.Container; c != nil {
		run := []string{"run", "--rm", "--network", "host", "--name", c.Name, "-v", inv.Dir + ":" + ContainerDir, "-w", ContainerDir}
		for _, kv := range inv.Env {
			run = append(run, "-e", kv)
		}
		run = append(run, c.Image, "ansible-playbook")
		cmd = exec.Command(c.Runtime, append(run, args...)...)
		// The runtime's client gets what it needs to reach its service
		// and registries; the playbook in the container gets inv.Env only.
		cmd.Env = childenv.Minimal(runtimeEnv...)
	} else {
		p := e.Path
		if p == "" {
			p = "ansible-playbook"
		}
		path, err := exec.LookPath(p)
		if err != nil {
			return 0, ErrNoAnsible
		}
		cmd = exec.Command(path, args...)
		// A playbook is code from a bundle: it gets the settings of its
		// run and PATH, HOME and LANG, never the worker's secrets (its
		// database DSN, PGPASSWORD, API tokens).
		cmd.Env = append(childenv.Minimal(), inv.Env...)
	}
	cmd.Dir = inv.Dir
	out := inv.Output
	if out == nil {
		out = io.Discard
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A child that left the group and keeps the output open must not hold
	// Wait forever.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		if inv.Container != nil {
			return 0, err
		}
		return 0, ErrNoAnsible
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if c := inv.Container; c != nil {
			// Killing the runtime's client does not stop the container.
			rm, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_ = exec.CommandContext(rm, c.Runtime, "rm", "-f", c.Name).Run()
			cancel()
		}
		<-waited
		return 0, ctx.Err()
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return 128 + int(st.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 0, err
}
