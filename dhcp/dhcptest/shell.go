package dhcptest

import (
	"context"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/dhcp"
)

// model is the DHCP service of ShellService, a POSIX shell script run as
// "sh model HOSTS STATE test|restart|status|dump". HOSTS holds the host
// files; STATE holds the service's state: "running" while it runs, one line
// per restart in "restarts" and per overlap in "overlaps", the host files of
// the last successful restart in "loaded/", the number of restarts still to
// fail in "fail-restarts", and "busy/" while a config test or restart runs.
const model = `# dhcptest: a model DHCP service for the dhcp.Remote contract suite.
hosts=$1 state=$2
check() {
	for f in "$hosts"/*.conf; do
		[ -s "$f" ] || continue
		if ! grep -q '^host [A-Za-z0-9][A-Za-z0-9_.-]* {$' "$f" ||
			! grep -q '^  hardware ethernet [0-9a-fA-F:]*;$' "$f" ||
			! grep -q '^  fixed-address [0-9.]*;$' "$f" ||
			! grep -q '^}$' "$f"; then
			echo "$f: not a host declaration with hardware ethernet and fixed-address" >&2
			return 1
		fi
	done
	dup=$(cat "$hosts"/*.conf 2>/dev/null | grep '^  fixed-address ' | sort | uniq -d)
	if [ -n "$dup" ]; then
		echo "an address is reserved twice:$dup" >&2
		return 1
	fi
	return 0
}
enter() {
	mkdir "$state/busy" 2>/dev/null || echo x >>"$state/overlaps"
	sleep 0.05
}
leave() { rmdir "$state/busy" 2>/dev/null; }
case $3 in
test)
	enter
	check
	rc=$?
	leave
	exit $rc
	;;
restart)
	enter
	rm -f "$state/running"
	n=$(cat "$state/fail-restarts" 2>/dev/null)
	if [ "${n:-0}" -gt 0 ]; then
		echo $((n - 1)) >"$state/fail-restarts"
		leave
		echo "the daemon did not start" >&2
		exit 1
	fi
	if ! check; then
		leave
		exit 1
	fi
	rm -rf "$state/loaded"
	mkdir "$state/loaded"
	for f in "$hosts"/*.conf; do
		[ -e "$f" ] && cp "$f" "$state/loaded/"
	done
	echo x >>"$state/restarts"
	: >"$state/running"
	leave
	exit 0
	;;
status)
	[ -e "$state/running" ]
	exit $?
	;;
dump)
	if [ -e "$state/running" ]; then echo running; fi
	echo "restarts $(cat "$state/restarts" 2>/dev/null | wc -l)"
	echo "overlaps $(cat "$state/overlaps" 2>/dev/null | wc -l)"
	for f in "$state/loaded"/*.conf; do
		[ -e "$f" ] && echo "loaded $(sha256sum <"$f" | cut -d' ' -f1) $(basename "$f")"
	done
	exit 0
	;;
esac
echo "usage: model HOSTS STATE test|restart|status|dump" >&2
exit 2
`

// ShellService is the contract's Service on a server whose Remote.Run is a
// POSIX shell with coreutils and grep: a shell script modelling a DHCP
// service, installed through r under base, an existing, empty directory
// that is not the Target's Dir. Host files go to base/hosts.
func ShellService(t *testing.T, r dhcp.Remote, base string) Service {
	t.Helper()
	ctx := context.Background()
	hosts, state, script := path.Join(base, "hosts"), path.Join(base, "state"), path.Join(base, "model.sh")
	out, err := r.Run(ctx, "mkdir -p -- "+dhcp.ShellQuote(hosts)+" "+dhcp.ShellQuote(state))
	if err != nil || out.Exit != 0 {
		t.Fatalf("dhcptest: creating the model service's directories: %v %q", err, out.Output)
	}
	for p, data := range map[string]string{script: model, path.Join(state, "running"): ""} {
		if err := r.Upload(ctx, p, []byte(data)); err != nil {
			t.Fatalf("dhcptest: installing the model service: %v", err)
		}
	}
	cmd := func(verb string) string {
		return "sh " + dhcp.ShellQuote(script) + " " + dhcp.ShellQuote(hosts) + " " + dhcp.ShellQuote(state) + " " + verb
	}
	return Service{
		Config: dhcp.Config{Flavour: dhcp.ISC, Dir: hosts, ConfigTest: cmd("test"), Restart: cmd("restart"), Status: cmd("status")},
		FailRestarts: func(t *testing.T, n int) {
			t.Helper()
			if err := r.Upload(context.Background(), path.Join(state, "fail-restarts"), []byte(strconv.Itoa(n)+"\n")); err != nil {
				t.Fatalf("dhcptest: FailRestarts: %v", err)
			}
		},
		State: func(t *testing.T) ServiceState {
			t.Helper()
			out, err := r.Run(context.Background(), cmd("dump"))
			if err != nil || out.Exit != 0 {
				t.Fatalf("dhcptest: reading the model service's state: %v %q", err, out.Output)
			}
			return parseDump(t, string(out.Output))
		},
	}
}

func parseDump(t *testing.T, s string) ServiceState {
	t.Helper()
	st := ServiceState{Loaded: map[string]string{}}
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(line)
		var err error
		switch {
		case len(f) == 1 && f[0] == "running":
			st.Running = true
		case len(f) == 2 && f[0] == "restarts":
			st.Restarts, err = strconv.Atoi(f[1])
		case len(f) == 2 && f[0] == "overlaps":
			st.Overlaps, err = strconv.Atoi(f[1])
		case len(f) == 3 && f[0] == "loaded":
			st.Loaded[f[2]] = f[1]
		default:
			t.Fatalf("dhcptest: unexpected model service state line %q", line)
		}
		if err != nil {
			t.Fatalf("dhcptest: model service state line %q: %v", line, err)
		}
	}
	return st
}
