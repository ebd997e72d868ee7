// Package sshtest is an in-process SSH server for tests of code that reaches
// a DHCP server through package ssh: exec runs the command with the local
// /bin/sh, and the sftp subsystem is pkg/sftp's server on the local file
// system. It listens on 127.0.0.1 only and stops when the test ends.
//
// A test starts a server that trusts one client key, then hands the client
// the key and a known_hosts line for the server, usually as the vault item
// ssh.VaultItem ([Server.VaultItem]):
//
//	client := sshtest.NewKey(t)
//	srv := sshtest.Start(t, client.PublicKey())
//	vault := map[string]map[string]string{ssh.VaultItem: srv.VaultItem(client, "deploy")}
package sshtest

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"os/exec"
	"sync"
	"syscall"
	"testing"

	"github.com/pkg/sftp"
	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/hostforge/hostforge/adapters/ssh"
)

// Key is an ed25519 key: its signer and its private key in OpenSSH PEM form.
type Key struct {
	Signer xssh.Signer
	PEM    string
}

// NewKey generates a fresh key.
func NewKey(t testing.TB) Key {
	t.Helper()
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// GenerateKey generates a fresh key outside a test (a lab).
func GenerateKey() (Key, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return Key{}, err
	}
	block, err := xssh.MarshalPrivateKey(priv, "")
	if err != nil {
		return Key{}, err
	}
	s, err := xssh.NewSignerFromKey(priv)
	if err != nil {
		return Key{}, err
	}
	return Key{Signer: s, PEM: string(pem.EncodeToMemory(block))}, nil
}

// PublicKey is the key's public half.
func (k Key) PublicKey() xssh.PublicKey { return k.Signer.PublicKey() }

// AuthorizedKey is the public key in authorized_keys form, newline-terminated.
func (k Key) AuthorizedKey() []byte { return xssh.MarshalAuthorizedKey(k.Signer.PublicKey()) }

// Server is an in-process SSH server.
type Server struct {
	// Addr is the server's 127.0.0.1:port.
	Addr string
	// HostKey is the key the server presents.
	HostKey Key

	ln net.Listener
	// stallLogin accepts TCP connections and never speaks.
	stallLogin bool
	// stallSFTP accepts the sftp subsystem and never answers.
	stallSFTP bool
	// stallAfterLogin logs the client in, then never answers a channel open.
	stallAfterLogin bool
	// stallSession opens sessions but never answers their requests.
	stallSession bool

	cmdMu    sync.Mutex
	commands []string

	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]bool
	done  chan struct{}
	once  sync.Once
}

// Option changes how a Server behaves.
type Option func(*Server)

// StallLogin makes the server accept TCP connections and never speak, so a
// client's login deadline expires.
func StallLogin(s *Server) { s.stallLogin = true }

// StallSFTP makes the server accept the sftp subsystem and never answer, so
// a client's transfer deadline expires.
func StallSFTP(s *Server) { s.stallSFTP = true }

// StallAfterLogin makes the server complete the handshake and log the
// client in, then never answer a request to open a session (a hung sshd
// child, or one out of sessions): a client's NewSession blocks.
func StallAfterLogin(s *Server) { s.stallAfterLogin = true }

// StallSession makes the server open sessions but never answer their
// requests (exec, subsystem): a client blocks starting the command.
func StallSession(s *Server) { s.stallSession = true }

// Commands lists the commands the server ran, in order.
func (s *Server) Commands() []string {
	s.cmdMu.Lock()
	defer s.cmdMu.Unlock()
	return append([]string(nil), s.commands...)
}

// Start starts a server that accepts public-key logins by client (any user
// name) and refuses every other key; a nil client is refused too. The server
// stops, and its goroutines end, in t's cleanup.
func Start(t testing.TB, client xssh.PublicKey, opts ...Option) *Server {
	t.Helper()
	s, err := Listen(client, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Listen starts a server as Start does, outside a test (a lab): the caller
// stops it with Close.
func Listen(client xssh.PublicKey, opts ...Option) (*Server, error) {
	hostKey, err := GenerateKey()
	if err != nil {
		return nil, err
	}
	s := &Server{HostKey: hostKey, conns: map[net.Conn]bool{}, done: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.ln, s.Addr = ln, ln.Addr().String()
	cfg := &xssh.ServerConfig{
		PublicKeyCallback: func(_ xssh.ConnMetadata, key xssh.PublicKey) (*xssh.Permissions, error) {
			if client != nil && string(key.Marshal()) == string(client.Marshal()) {
				return nil, nil
			}
			return nil, errors.New("unknown key")
		},
	}
	cfg.AddHostKey(s.HostKey.Signer)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns[c] = true
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				if s.stallLogin {
					<-s.done
					return
				}
				s.serve(c, cfg)
			}()
		}
	}()
	return s, nil
}

// KnownHosts is a known_hosts line for this server's address with key k
// (pass s.HostKey.PublicKey() for the true one).
func (s *Server) KnownHosts(k xssh.PublicKey) string {
	return knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, k) + "\n"
}

// VaultItem is the ssh.VaultItem fields that let client log in to this
// server as user and trust its host key.
func (s *Server) VaultItem(client Key, user string) map[string]string {
	return map[string]string{
		ssh.FieldPrivateKey: client.PEM,
		ssh.FieldKnownHosts: s.KnownHosts(s.HostKey.PublicKey()),
		ssh.FieldUser:       user,
	}
}

// Close stops the server and waits for its goroutines. Start registers it
// as a cleanup; calling it earlier (to make the address refuse connections)
// is allowed.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.done)
		s.ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
}

func (s *Server) serve(c net.Conn, cfg *xssh.ServerConfig) {
	sc, chans, reqs, err := xssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	defer sc.Close()
	s.wg.Add(1)
	go func() { defer s.wg.Done(); xssh.DiscardRequests(reqs) }()
	if s.stallAfterLogin {
		// Hold every channel open request unanswered until the client goes.
		var held []xssh.NewChannel
		for nc := range chans {
			held = append(held, nc)
		}
		_ = held
		return
	}
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(xssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		if s.stallSession {
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer ch.Close()
				for range creqs { // never answered
				}
			}()
			continue
		}
		s.wg.Add(1)
		go func() { defer s.wg.Done(); s.session(ch, creqs) }()
	}
}

func (s *Server) session(ch xssh.Channel, reqs <-chan *xssh.Request) {
	defer ch.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := false
	var wg sync.WaitGroup
	defer wg.Wait()
	for req := range reqs {
		switch {
		case req.Type == "exec" && !started:
			started = true
			var p struct{ Command string }
			if err := xssh.Unmarshal(req.Payload, &p); err != nil {
				_ = req.Reply(false, nil)
				return
			}
			_ = req.Reply(true, nil)
			s.cmdMu.Lock()
			s.commands = append(s.commands, p.Command)
			s.cmdMu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				code := run(ctx, p.Command, ch, &wg)
				_, _ = ch.SendRequest("exit-status", false, binary.BigEndian.AppendUint32(nil, uint32(code)))
				ch.Close()
			}()
		case req.Type == "subsystem" && !started:
			started = true
			var p struct{ Name string }
			if err := xssh.Unmarshal(req.Payload, &p); err != nil || p.Name != "sftp" {
				_ = req.Reply(false, nil)
				return
			}
			_ = req.Reply(true, nil)
			if s.stallSFTP {
				wg.Add(1)
				go func() { defer wg.Done(); _, _ = io.Copy(io.Discard, ch) }()
				continue
			}
			srv, err := sftp.NewServer(ch)
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = srv.Serve()
				srv.Close()
				ch.Close()
			}()
		case req.Type == "signal":
			cancel()
			_ = req.Reply(false, nil)
		default:
			_ = req.Reply(false, nil)
		}
	}
	// The client closed the channel: stop whatever still runs.
	cancel()
}

// run runs command with /bin/sh in its own process group, killed with the
// group when ctx ends. Its standard input is the channel's, so a command
// reading it (the client's lock) runs until the client closes its input or
// the channel. The goroutine copying that input is added to wg: it ends
// when the channel does, which may be after the command.
func run(ctx context.Context, command string, ch xssh.Channel, wg *sync.WaitGroup) int {
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 127
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(stdin, ch)
		_ = stdin.Close()
	}()
	if err := cmd.Start(); err != nil {
		return 127
	}
	waited := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		case <-waited:
		}
	}()
	err = cmd.Wait()
	close(waited)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return 128 + int(st.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}
