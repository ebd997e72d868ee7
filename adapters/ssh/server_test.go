package ssh_test

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
	"time"

	"github.com/pkg/sftp"
	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// keyPair is an ed25519 key with its PEM private key and public key.
type keyPair struct {
	signer xssh.Signer
	pem    string
}

func newKey(t testing.TB) keyPair {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := xssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := xssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return keyPair{signer: s, pem: string(pem.EncodeToMemory(block))}
}

// server is an in-process SSH server: exec runs the command with the local
// /bin/sh, the sftp subsystem is pkg/sftp's server on the local file system.
type server struct {
	addr    string
	hostKey keyPair
	ln      net.Listener
	// stallLogin accepts TCP connections and never speaks.
	stallLogin bool
	// stallSFTP accepts the sftp subsystem and never answers.
	stallSFTP bool

	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]bool
	done  chan struct{}
}

type serverOpt func(*server)

func stallLogin(s *server) { s.stallLogin = true }
func stallSFTP(s *server)  { s.stallSFTP = true }

func startServer(t testing.TB, client xssh.PublicKey, opts ...serverOpt) *server {
	t.Helper()
	s := &server{hostKey: newKey(t), conns: map[net.Conn]bool{}, done: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.ln, s.addr = ln, ln.Addr().String()
	cfg := &xssh.ServerConfig{
		PublicKeyCallback: func(_ xssh.ConnMetadata, key xssh.PublicKey) (*xssh.Permissions, error) {
			if client != nil && string(key.Marshal()) == string(client.Marshal()) {
				return nil, nil
			}
			return nil, errors.New("unknown key")
		},
	}
	cfg.AddHostKey(s.hostKey.signer)
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
	t.Cleanup(s.close)
	return s
}

// knownHosts is a known_hosts line for this server with key k.
func (s *server) knownHosts(k xssh.PublicKey) string {
	return knownhosts.Line([]string{knownhosts.Normalize(s.addr)}, k) + "\n"
}

func (s *server) close() {
	close(s.done)
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *server) serve(c net.Conn, cfg *xssh.ServerConfig) {
	sc, chans, reqs, err := xssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	defer sc.Close()
	s.wg.Add(1)
	go func() { defer s.wg.Done(); xssh.DiscardRequests(reqs) }()
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(xssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		s.wg.Add(1)
		go func() { defer s.wg.Done(); s.session(ch, creqs) }()
	}
}

func (s *server) session(ch xssh.Channel, reqs <-chan *xssh.Request) {
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
			wg.Add(1)
			go func() {
				defer wg.Done()
				code := run(ctx, p.Command, ch)
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
// group when ctx ends.
func run(ctx context.Context, command string, ch xssh.Channel) int {
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
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
	err := cmd.Wait()
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

// memVault is a tiny ssh.Vault.
type memVault map[string]map[string]string

func (v memVault) Item(_ context.Context, name string) (map[string]string, error) {
	it, ok := v[name]
	if !ok {
		return nil, errNotFound
	}
	cp := map[string]string{}
	for k, val := range it {
		cp[k] = val
	}
	return cp, nil
}

var _ = time.Second

func marshalAuthorizedKey(k keyPair) []byte { return xssh.MarshalAuthorizedKey(k.signer.PublicKey()) }
