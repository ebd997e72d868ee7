package fakes

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/hostforge/hostforge/dhcp"
)

// DHCPServer is the fake DHCP server host: a file system of files by path,
// a shell that knows the commands the DHCP phase and the dhcptest contract
// suite use, and a DHCP service with a restart counter whose config test
// and restart reject malformed host files the way dhcpd -t and kea-dhcp4 -t
// do.
//
// It implements dhcp.Dialer. Calls are counted under SysDHCP: "connect",
// "hash" and "read" are reads, "upload", "remove", "lock" and "run" are
// writes; each honours the site's fault injection under the same op name.
// Inject dhcp.ErrHostKey on "connect" for a changed host key,
// hostforge.ErrUnauthorized for a refused key, hostforge.ErrUnavailable for
// an unreachable server.
//
// Locks are the server's: every session of this server that locks a path
// waits for the session holding it, and a session's locks are released when
// it closes, as flock(2) locks are when an SSH session ends.
//
// The shell runs one command per call, without pipes or redirections:
// true, false, exit N, echo, cat, ls -A, mkdir -p, mv -f, rm -f, sha256sum,
// sleep (which hangs until the caller's context ends, modelling a stuck
// command), and the site's config test, restart and status commands as
// configured with UseConfig (default: dhcp.Defaults(dhcp.ISC)).
type DHCPServer struct {
	site *Site

	mu    sync.Mutex
	cfg   dhcp.Config
	files map[string][]byte
	dirs  map[string]bool
	// The config test's view, kept incrementally so a site of thousands of
	// hosts is not re-parsed on every restart: files changed since the last
	// successful validation, the reservations each validated file holds, and
	// who holds each reservation key.
	dirty    map[string]bool
	holds    map[string][]string
	holder   map[string]string
	restarts int
	active   bool
	broken   bool
	// failRestarts is how many of the next restarts fail.
	failRestarts int
	// loaded is what the service runs on: each host file's SHA-256 as of the
	// last successful restart.
	loaded map[string]string
	// unloaded are the paths written since the last successful restart.
	unloaded map[string]bool
	// during runs inside every config test and restart, outside the lock
	// (tests widen the window in which overlapping commands would be seen).
	during       func()
	inRestart    int
	maxInRestart int
	inService    int
	overlaps     int
	// locks are the server's flock locks, by path: a token in the channel
	// means held.
	locks map[string]chan struct{}
}

func newDHCPServer(s *Site) *DHCPServer {
	return &DHCPServer{site: s, cfg: dhcp.Defaults(dhcp.ISC), files: map[string][]byte{}, dirs: map[string]bool{"/": true}, active: true,
		dirty: map[string]bool{}, holds: map[string][]string{}, holder: map[string]string{}, loaded: map[string]string{},
		unloaded: map[string]bool{},
		locks:    map[string]chan struct{}{}}
}

// UseConfig sets the flavour, directory and service commands the server
// knows (zero fields take the flavour's defaults).
func (d *DHCPServer) UseConfig(cfg dhcp.Config) error {
	rc, err := cfg.Resolved()
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cfg = rc
	for p := range d.files {
		d.dirty[p] = true
		d.unloaded[p] = true
	}
	for p := range d.holds {
		d.dirty[p] = true
	}
	for p := range d.loaded {
		d.unloaded[p] = true
	}
	return nil
}

// Config returns the configuration the server knows.
func (d *DHCPServer) Config() dhcp.Config {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cfg
}

// File returns a file's content without counting a call.
func (d *DHCPServer) File(p string) ([]byte, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, ok := d.files[p]
	return append([]byte(nil), b...), ok
}

// PutFile writes a file (creating its directories) without counting a call.
func (d *DHCPServer) PutFile(p string, data []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mkdirAll(path.Dir(p))
	d.setFile(p, data)
}

// RemoveFile removes a file without counting a call.
func (d *DHCPServer) RemoveFile(p string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.files[p]; ok {
		d.removeFile(p)
	}
}

// Mkdir creates a directory and its parents without counting a call.
func (d *DHCPServer) Mkdir(p string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mkdirAll(p)
}

// Paths lists every file, sorted.
func (d *DHCPServer) Paths() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.files))
	for p := range d.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Restarts is the number of successful service restarts.
func (d *DHCPServer) Restarts() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.restarts
}

// Active reports whether the service is running.
func (d *DHCPServer) Active() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.active
}

// MaxConcurrentRestarts is the largest number of restarts seen running at once.
func (d *DHCPServer) MaxConcurrentRestarts() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.maxInRestart
}

// Overlaps is the number of times a config test or restart started while
// another one was running: 0 when every change was serialised.
func (d *DHCPServer) Overlaps() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.overlaps
}

// Loaded is what the running service loaded: the SHA-256 of each host file
// as of the last successful restart, by path.
func (d *DHCPServer) Loaded() map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]string, len(d.loaded))
	for p, sum := range d.loaded {
		out[p] = sum
	}
	return out
}

// FailRestarts makes the next n restarts fail (exit 1, service down) as a
// daemon that does not start on a configuration its test accepted does.
func (d *DHCPServer) FailRestarts(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failRestarts = n
}

// SetBroken makes the service fail to start (restart exits 1) while b is true.
func (d *DHCPServer) SetBroken(b bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.broken = b
}

// DuringRestart sets a function every config test and restart calls while
// it runs.
func (d *DHCPServer) DuringRestart(f func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.during = f
}

func (d *DHCPServer) enter(ctx context.Context, op string, write bool) error {
	return d.site.enter(ctx, SysDHCP, op, write)
}

// Dial opens a session. It counts a "connect" read.
func (d *DHCPServer) Dial(ctx context.Context) (dhcp.Remote, error) {
	if err := d.enter(ctx, "connect", false); err != nil {
		return nil, err
	}
	return &dhcpSession{d: d}, nil
}

type dhcpSession struct {
	d      *DHCPServer
	mu     sync.Mutex
	closed bool
	// held releases the locks this session holds, by a key per Lock call.
	held map[int]func()
	next int
}

func (s *dhcpSession) check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return &dhcp.RemoteError{Kind: dhcp.KindTransport, Op: "run", Err: fmt.Errorf("session closed")}
	}
	return nil
}

// Close ends the session and releases its locks.
func (s *dhcpSession) Close() error {
	s.mu.Lock()
	s.closed = true
	held := s.held
	s.held = nil
	s.mu.Unlock()
	for _, release := range held {
		release()
	}
	return nil
}

func (s *dhcpSession) Hash(ctx context.Context, paths ...string) ([]string, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := s.d.enter(ctx, "hash", false); err != nil {
		return nil, err
	}
	sums := make([]string, len(paths))
	for i, p := range paths {
		if b, ok := s.d.File(p); ok {
			sums[i] = dhcp.SHA256(b)
		}
	}
	return sums, nil
}

func (s *dhcpSession) Read(ctx context.Context, p string) ([]byte, bool, error) {
	if err := s.check(); err != nil {
		return nil, false, err
	}
	if err := s.d.enter(ctx, "read", false); err != nil {
		return nil, false, err
	}
	d := s.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dirs[p] {
		return nil, false, &dhcp.RemoteError{Kind: dhcp.KindTransfer, Op: "read", Target: p, Err: fmt.Errorf("read %s: is a directory", p)}
	}
	b, ok := d.files[p]
	if !ok {
		return nil, false, nil
	}
	return append([]byte(nil), b...), true, nil
}

func (s *dhcpSession) Upload(ctx context.Context, p string, data []byte) (err error) {
	if err := s.check(); err != nil {
		return err
	}
	if err := s.d.enter(ctx, "upload", true); err != nil {
		return err
	}
	defer s.d.site.answer(ctx, SysDHCP, "upload", &err)
	d := s.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.dirs[path.Dir(p)] {
		return &dhcp.RemoteError{Kind: dhcp.KindTransfer, Op: "upload", Target: p, Err: fmt.Errorf("open %s: no such file or directory", path.Dir(p))}
	}
	if d.dirs[p] {
		return &dhcp.RemoteError{Kind: dhcp.KindTransfer, Op: "upload", Target: p, Err: fmt.Errorf("rename over %s: is a directory", p)}
	}
	d.setFile(p, data)
	return nil
}

func (s *dhcpSession) Remove(ctx context.Context, p string) (err error) {
	if err := s.check(); err != nil {
		return err
	}
	if err := s.d.enter(ctx, "remove", true); err != nil {
		return err
	}
	defer s.d.site.answer(ctx, SysDHCP, "remove", &err)
	d := s.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dirs[p] {
		return &dhcp.RemoteError{Kind: dhcp.KindTransfer, Op: "remove", Target: p, Err: fmt.Errorf("remove %s: is a directory", p)}
	}
	if _, ok := d.files[p]; ok {
		d.removeFile(p)
	}
	return nil
}

// Lock takes the server's lock on p, a directory or a file (created when
// absent in an existing directory), waiting for its holder or ctx.
func (s *dhcpSession) Lock(ctx context.Context, p string) (unlock func() error, err error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := s.d.enter(ctx, "lock", true); err != nil {
		return nil, err
	}
	defer s.d.site.answer(ctx, SysDHCP, "lock", &err)
	d := s.d
	d.mu.Lock()
	if !d.dirs[p] {
		if _, ok := d.files[p]; !ok {
			if !d.dirs[path.Dir(p)] {
				d.mu.Unlock()
				return nil, &dhcp.RemoteError{Kind: dhcp.KindLock, Op: "lock", Target: p, Err: fmt.Errorf("cannot open %s: No such file or directory", p)}
			}
			d.setFile(p, nil)
		}
	}
	ch := d.locks[p]
	if ch == nil {
		ch = make(chan struct{}, 1)
		d.locks[p] = ch
	}
	d.mu.Unlock()
	select {
	case ch <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	var once sync.Once
	release := func() { once.Do(func() { <-ch }) }
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		release()
		return nil, &dhcp.RemoteError{Kind: dhcp.KindTransport, Op: "lock", Target: p, Err: fmt.Errorf("session closed")}
	}
	if s.held == nil {
		s.held = map[int]func(){}
	}
	key := s.next
	s.next++
	s.held[key] = release
	s.mu.Unlock()
	return func() error {
		s.mu.Lock()
		delete(s.held, key)
		s.mu.Unlock()
		release()
		return nil
	}, nil
}

// setFile and removeFile are the only writers of files, so the config
// test's incremental view stays exact.
func (d *DHCPServer) setFile(p string, data []byte) {
	d.files[p] = append([]byte(nil), data...)
	d.dirty[p] = true
	d.unloaded[p] = true
}

func (d *DHCPServer) removeFile(p string) {
	delete(d.files, p)
	d.dirty[p] = true
	d.unloaded[p] = true
}

func (s *dhcpSession) Run(ctx context.Context, command string) (_ dhcp.Output, err error) {
	if err := s.check(); err != nil {
		return dhcp.Output{}, err
	}
	if err := s.d.enter(ctx, "run", true); err != nil {
		return dhcp.Output{}, err
	}
	defer s.d.site.answer(ctx, SysDHCP, "run", &err)
	return s.d.exec(ctx, command)
}

func out(exit int, format string, args ...any) (dhcp.Output, error) {
	return dhcp.Output{Exit: exit, Output: []byte(fmt.Sprintf(format, args...))}, nil
}

// exec interprets one command line.
func (d *DHCPServer) exec(ctx context.Context, command string) (dhcp.Output, error) {
	cfg := d.Config()
	switch strings.TrimSpace(command) {
	case cfg.ConfigTest:
		d.enterService()
		d.mu.Lock()
		err := d.validateLocked()
		d.mu.Unlock()
		d.leaveService()
		if err != nil {
			return out(1, "Configuration file errors encountered -- exiting\n%v\n", err)
		}
		return out(0, "")
	case cfg.Restart:
		return d.restart()
	case cfg.Status:
		if d.Active() {
			return out(0, "")
		}
		return out(3, "")
	}
	argv, err := splitWords(command)
	if err != nil {
		return out(2, "sh: %v\n", err)
	}
	if len(argv) == 0 {
		return out(0, "")
	}
	switch argv[0] {
	case "true":
		return out(0, "")
	case "false":
		return out(1, "")
	case "exit":
		if len(argv) != 2 {
			return out(0, "")
		}
		n, err := strconv.Atoi(argv[1])
		if err != nil || n < 0 || n > 255 {
			return out(2, "sh: exit: Illegal number: %s\n", argv[1])
		}
		return out(n, "")
	case "echo":
		return out(0, "%s\n", strings.Join(argv[1:], " "))
	case "sleep":
		// A command that hangs: it ends with the caller's context.
		<-ctx.Done()
		return dhcp.Output{}, ctx.Err()
	}
	// File commands: flags first, then "--", then operands.
	var flags []string
	for len(argv) > 1 && strings.HasPrefix(argv[1], "-") && argv[1] != "--" {
		flags = append(flags, argv[1])
		argv = append(argv[:1], argv[2:]...)
	}
	args := argv[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch argv[0] {
	case "cat":
		var b []byte
		for _, p := range args {
			f, ok := d.files[p]
			if !ok {
				return out(1, "cat: %s: No such file or directory\n", p)
			}
			b = append(b, f...)
		}
		return dhcp.Output{Output: b}, nil
	case "sha256sum":
		var lines strings.Builder
		for _, p := range args {
			f, ok := d.files[p]
			if !ok {
				return out(1, "sha256sum: %s: No such file or directory\n", p)
			}
			fmt.Fprintf(&lines, "%s  %s\n", dhcp.SHA256(f), p)
		}
		return out(0, "%s", lines.String())
	case "ls":
		if len(args) != 1 || !d.dirs[args[0]] {
			return out(2, "ls: cannot access: No such file or directory\n")
		}
		var names []string
		for p := range d.files {
			if path.Dir(p) == args[0] {
				names = append(names, path.Base(p))
			}
		}
		for p := range d.dirs {
			if p != args[0] && path.Dir(p) == args[0] {
				names = append(names, path.Base(p))
			}
		}
		sort.Strings(names)
		var b strings.Builder
		for _, n := range names {
			b.WriteString(n + "\n")
		}
		return out(0, "%s", b.String())
	case "mkdir":
		for _, p := range args {
			if !path.IsAbs(p) {
				return out(1, "mkdir: %s: relative paths are not supported\n", p)
			}
			if _, isFile := d.files[p]; isFile {
				return out(1, "mkdir: cannot create directory '%s': File exists\n", p)
			}
			if !d.mkdirAll(p) {
				return out(1, "mkdir: cannot create directory '%s': Not a directory\n", p)
			}
		}
		return out(0, "")
	case "mv":
		if len(args) != 2 {
			return out(1, "mv: want a source and a destination\n")
		}
		f, ok := d.files[args[0]]
		if !ok {
			return out(1, "mv: cannot stat '%s': No such file or directory\n", args[0])
		}
		if !d.dirs[path.Dir(args[1])] {
			return out(1, "mv: cannot move '%s': No such file or directory\n", args[0])
		}
		d.removeFile(args[0])
		d.setFile(args[1], f)
		return out(0, "")
	case "rm":
		for _, p := range args {
			d.removeFile(p)
		}
		return out(0, "")
	}
	return out(127, "sh: 1: %s: not found\n", argv[0])
}

// mkdirAll creates p and its parents; false when a parent is a file.
func (d *DHCPServer) mkdirAll(p string) bool {
	p = path.Clean(p)
	if d.dirs[p] {
		return true
	}
	if _, isFile := d.files[p]; isFile {
		return false
	}
	if !d.mkdirAll(path.Dir(p)) {
		return false
	}
	d.dirs[p] = true
	return true
}

// enterService and leaveService bracket a config test or restart: they
// count overlapping service commands and run the during hook.
func (d *DHCPServer) enterService() {
	d.mu.Lock()
	d.inService++
	if d.inService > 1 {
		d.overlaps++
	}
	during := d.during
	d.mu.Unlock()
	if during != nil {
		during()
	}
}

func (d *DHCPServer) leaveService() {
	d.mu.Lock()
	d.inService--
	d.mu.Unlock()
}

func (d *DHCPServer) restart() (dhcp.Output, error) {
	d.mu.Lock()
	d.inRestart++
	if d.inRestart > d.maxInRestart {
		d.maxInRestart = d.inRestart
	}
	d.mu.Unlock()
	d.enterService()
	defer d.leaveService()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inRestart--
	if d.broken || d.failRestarts > 0 {
		if d.failRestarts > 0 {
			d.failRestarts--
		}
		d.active = false
		return out(1, "Job for the DHCP service failed because the control process exited with error code.\n")
	}
	if err := d.validateLocked(); err != nil {
		d.active = false
		return out(1, "Job for the DHCP service failed: %v\n", err)
	}
	d.restarts++
	d.active = true
	for p := range d.unloaded {
		b, ok := d.files[p]
		if ok && path.Dir(p) == d.cfg.Dir && strings.HasSuffix(p, d.cfg.Flavour.Extension()) {
			d.loaded[p] = dhcp.SHA256(b)
		} else {
			delete(d.loaded, p)
		}
	}
	clear(d.unloaded)
	return out(0, "")
}

// validateLocked checks every host file in the configured directory the way
// the real config test would: malformed syntax, a bad MAC or IPv4 address,
// or a host name, MAC or address reserved twice is an error.
func (d *DHCPServer) validateLocked() error {
	names := make([]string, 0, len(d.dirty))
	for p := range d.dirty {
		names = append(names, p)
	}
	sort.Strings(names)
	// Drop every changed file's reservations first, so a reservation moved
	// from one file to another within one change is not a duplicate.
	for _, p := range names {
		for _, k := range d.holds[p] {
			delete(d.holder, k)
		}
		delete(d.holds, p)
	}
	for _, p := range names {
		b, exists := d.files[p]
		if !exists || path.Dir(p) != d.cfg.Dir || !strings.HasSuffix(p, d.cfg.Flavour.Extension()) {
			delete(d.dirty, p)
			continue
		}
		var host, mac, ip string
		var err error
		if d.cfg.Flavour == dhcp.Kea {
			host, mac, ip, err = parseKeaReservation(b)
		} else {
			host, mac, ip, err = parseISCHost(b)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if mac == "" {
			delete(d.dirty, p)
			continue
		}
		keys := []string{"host " + host, "hardware " + mac, "address " + ip}
		for _, k := range keys {
			if other, dup := d.holder[k]; dup && other != p {
				return fmt.Errorf("%s: %s is already reserved in %s", p, k, other)
			}
		}
		for _, k := range keys {
			d.holder[k] = p
		}
		d.holds[p] = keys
		delete(d.dirty, p)
	}
	return nil
}

var iscHostRE = regexp.MustCompile(`^host ([A-Za-z0-9][A-Za-z0-9_.-]*) \{\n` +
	`  hardware ethernet ([0-9a-fA-F:]+);\n` +
	`  fixed-address ([0-9.]+);\n` +
	`(?:  option host-name "([A-Za-z0-9_.-]*)";\n)?` +
	`\}\n?$`)

func parseISCHost(b []byte) (host, mac, ip string, err error) {
	var body strings.Builder
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		body.WriteString(line)
	}
	if strings.TrimSpace(body.String()) == "" {
		return "", "", "", nil // an empty include is valid and reserves nothing
	}
	m := iscHostRE.FindStringSubmatch(body.String())
	if m == nil {
		return "", "", "", fmt.Errorf("not a host declaration with hardware ethernet and fixed-address")
	}
	return checkReservation(m[1], m[2], m[3])
}

func parseKeaReservation(b []byte) (host, mac, ip string, err error) {
	var r struct {
		Hostname  string `json:"hostname"`
		HWAddress string `json:"hw-address"`
		IPAddress string `json:"ip-address"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return "", "", "", fmt.Errorf("not a reservation object: %w", err)
	}
	if r.HWAddress == "" || r.IPAddress == "" {
		return "", "", "", fmt.Errorf("a reservation needs hw-address and ip-address")
	}
	return checkReservation(r.Hostname, r.HWAddress, r.IPAddress)
}

func checkReservation(host, mac, ip string) (string, string, string, error) {
	hw, err := net.ParseMAC(mac)
	if err != nil || len(hw) != 6 {
		return "", "", "", fmt.Errorf("%q is not an Ethernet address", mac)
	}
	a, err := netip.ParseAddr(ip)
	if err != nil || !a.Is4() {
		return "", "", "", fmt.Errorf("%q is not an IPv4 address", ip)
	}
	return host, hw.String(), a.String(), nil
}

// splitWords splits a command line into words: whitespace separates,
// single quotes are literal, double quotes allow \" and \\, a backslash
// outside quotes escapes the next byte. Shell operators are refused.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated quote")
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case strings.IndexByte(";|&<>`$()\n", c) >= 0:
			return nil, fmt.Errorf("shell syntax %q is not supported by the fake", c)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
