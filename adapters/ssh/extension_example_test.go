package ssh_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hostforge/hostforge/adapters/ssh"
	"github.com/hostforge/hostforge/adapters/ssh/sshtest"
	"github.com/hostforge/hostforge/extensions"
)

// An SSH task run on a host whose key the site's known_hosts lists.
func ExampleExtensionRunner_Run() {
	srv, err := sshtest.Listen(nil, sshtest.AcceptPassword("s3cret-pass"))
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	dir, _ := os.MkdirTemp("", "known-hosts")
	defer os.RemoveAll(dir)
	knownHosts := filepath.Join(dir, "known_hosts")
	_ = os.WriteFile(knownHosts, []byte(srv.KnownHosts(srv.HostKey.PublicKey())), 0o644)

	host, p, _ := net.SplitHostPort(srv.Addr)
	port, _ := strconv.Atoi(p)
	r := &ssh.ExtensionRunner{KnownHosts: knownHosts}
	res, err := r.Run(context.Background(), extensions.Request{
		Extension: "ops", Task: "announce", TaskType: extensions.TaskSSH,
		SSH:  &extensions.SSHOptions{Host: host, Port: port, Username: "operator", Password: "s3cret-pass", Timeout: 10},
		Body: "echo registered 6SBT0R3",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.ReplaceAll(res.Message, srv.Addr, "HOST:PORT"))
	// Output:
	// exit 0 on HOST:PORT as operator
	// command: echo registered 6SBT0R3
	// output: registered 6SBT0R3
}
