// Command benchtemporal measures the enrollment on the real engine (see
// internal/benchtemporal): for each N of -hosts and each count of
// -workers, N healthy hosts of a fake fleet enrolled through a Temporal dev
// server, and the same N through flow.Local as the limit. Each
// configuration runs in a process of its own (so its CPU and resident
// high-water mark are its own); the dev server is this command's own, on
// free loopback ports, so its CPU is the runs' alone.
//
//	go run ./internal/cmd/benchtemporal -hosts 100,500 -workers 1,2 \
//	    -temporal-cli ~/.cache/hostforge/temporal-cli-v1.5.1/temporal -cpuprofile /tmp/worker.pprof
//
// It prints one markdown row per run, and with -cpuprofile the split of the
// profiled run's worker CPU by owner (hostforge, the fakes, the Temporal
// SDK, gRPC and protobuf, the runtime) and hostforge's largest costs.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hostforge/hostforge/internal/benchtemporal"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("benchtemporal", flag.ContinueOnError)
	fs.SetOutput(stderr)
	hosts := fs.String("hosts", "100,500", "fleet sizes, comma-separated")
	workers := fs.String("workers", "1,2", "worker counts, comma-separated")
	cli := fs.String("temporal-cli", os.Getenv("HOSTFORGE_TEMPORAL_CLI"), "the temporal CLI, whose dev server the runs use")
	addr := fs.String("temporal", "", "use this Temporal frontend instead of starting a dev server (its CPU is then not measured)")
	seed := fs.Uint64("seed", 1, "the fleet's seed")
	profile := fs.String("cpuprofile", "", "write the CPU profile of the largest single-worker run here and split it by owner")
	local := fs.Bool("local", true, "also run each N through flow.Local")
	// One run, in this process (the command runs itself so).
	child := fs.String("child", "", "internal: run one configuration (temporal or local) and print its JSON result")
	n := fs.Int("n", 0, "internal: hosts of the child run")
	w := fs.Int("w", 0, "internal: workers of the child run")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *child != "" {
		return runChild(*child, *addr, *n, *w, *seed, *profile, stdout, stderr)
	}
	ns, err := ints(*hosts)
	ws, err2 := ints(*workers)
	if err != nil || err2 != nil {
		fmt.Fprintln(stderr, "benchtemporal: -hosts and -workers are comma-separated counts")
		return 2
	}
	serverPID := 0
	if *addr == "" {
		if *cli == "" {
			fmt.Fprintln(stderr, "benchtemporal: give -temporal-cli (or HOSTFORGE_TEMPORAL_CLI) to start a dev server, or -temporal ADDRESS")
			return 2
		}
		a, pid, stop, err := devServer(*cli)
		if err != nil {
			fmt.Fprintln(stderr, "benchtemporal:", err)
			return 1
		}
		defer stop()
		*addr, serverPID = a, pid
	}
	maxN := 0
	for _, x := range ns {
		maxN = max(maxN, x)
	}
	fmt.Fprintf(stdout, "load before: %s\n\n", loadavg())
	fmt.Fprintln(stdout, "| run | hosts | workers | wall | hosts/min | available | events p50 / max | history p50 | longest run | activities p50 | timers p50 | worker CPU | CPU / 100 hosts | peak RSS | RSS / 100 hosts | server CPU | server CPU / 100 hosts |")
	fmt.Fprintln(stdout, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, n := range ns {
		modes := []struct {
			mode string
			w    int
		}{}
		for _, w := range ws {
			modes = append(modes, struct {
				mode string
				w    int
			}{"temporal", w})
		}
		if *local {
			modes = append(modes, struct {
				mode string
				w    int
			}{"local", 0})
		}
		for _, m := range modes {
			prof := ""
			if *profile != "" && m.mode == "temporal" && m.w == 1 && n == maxN {
				prof = *profile
			}
			before, _ := benchtemporal.ProcessCPU(serverPID)
			r, err := spawn(m.mode, *addr, n, m.w, *seed, prof)
			if err != nil {
				fmt.Fprintln(stderr, "benchtemporal:", err)
				return 1
			}
			if serverPID != 0 && m.mode == "temporal" {
				after, _ := benchtemporal.ProcessCPU(serverPID)
				r.ServerCPU = after - before
			}
			fmt.Fprintln(stdout, row(r))
		}
	}
	fmt.Fprintf(stdout, "\nload after: %s\n", loadavg())
	if *profile != "" {
		s, err := benchtemporal.Attribute(filepath.Join(runtime.GOROOT(), "bin", "go"), *profile)
		if err != nil {
			fmt.Fprintln(stderr, "benchtemporal:", err)
			return 1
		}
		fmt.Fprintf(stdout, "\nworker CPU of the profiled run (%d hosts, 1 worker), %s sampled, by owner of the innermost owned frame:\n\n", maxN, s.Total.Round(time.Millisecond))
		for _, o := range benchtemporal.Top(s.ByOwner, 10) {
			fmt.Fprintf(stdout, "- %-18s %8s  %4.1f %%\n", o, s.ByOwner[o].Round(10*time.Millisecond), 100*float64(s.ByOwner[o])/float64(s.Total))
		}
		fmt.Fprintf(stdout, "\nhostforge's own, by its innermost function:\n\n")
		for _, f := range benchtemporal.Top(s.Hostforge, 12) {
			fmt.Fprintf(stdout, "- %-80s %8s  %4.1f %%\n", f, s.Hostforge[f].Round(10*time.Millisecond), 100*float64(s.Hostforge[f])/float64(s.Total))
		}
	}
	return 0
}

// spawn runs one configuration in a process of its own.
func spawn(mode, addr string, n, w int, seed uint64, profile string) (benchtemporal.Result, error) {
	var r benchtemporal.Result
	args := []string{"-child", mode, "-n", strconv.Itoa(n), "-w", strconv.Itoa(w), "-seed", strconv.FormatUint(seed, 10), "-temporal", addr}
	if profile != "" {
		args = append(args, "-cpuprofile", profile)
	}
	cmd := exec.Command(os.Args[0], args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return r, fmt.Errorf("%s run of %d hosts, %d workers: %v\n%s", mode, n, w, err, errb.String())
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return r, fmt.Errorf("%s run: %v: %s", mode, err, out.String())
	}
	return r, nil
}

func runChild(mode, addr string, n, w int, seed uint64, profile string, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	var r benchtemporal.Result
	var err error
	switch mode {
	case "temporal":
		r, err = benchtemporal.RunTemporal(ctx, addr, n, w, seed)
	case "local":
		r, err = benchtemporal.RunLocal(ctx, n, seed)
	default:
		err = fmt.Errorf("unknown run %q", mode)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	_ = json.NewEncoder(stdout).Encode(r)
	return 0
}

// row is a run's markdown row.
func row(r benchtemporal.Result) string {
	per := func(d time.Duration) string {
		return fmt.Sprintf("%.1f s", d.Seconds()*100/float64(r.Hosts))
	}
	mib := func(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
	avail := fmt.Sprintf("%d", r.Available)
	if len(r.Failed) > 0 {
		avail += fmt.Sprintf(" (%v)", r.Failed)
	}
	if r.Mode == "local" {
		return fmt.Sprintf("| flow.Local (the limit) | %d | — | %.1f s | %.0f | %s | — | — | — | — | — | %.1f s | %s | %s | %s | — | — |",
			r.Hosts, r.Wall.Seconds(), r.HostsPerMinute(), avail, r.CPU.Seconds(), per(r.CPU), mib(r.PeakRSS), mib(r.PeakRSS*100/int64(r.Hosts)))
	}
	server := "—"
	serverPer := "—"
	if r.ServerCPU > 0 {
		server, serverPer = fmt.Sprintf("%.1f s", r.ServerCPU.Seconds()), per(r.ServerCPU)
	}
	return fmt.Sprintf("| Temporal | %d | %d | %.1f s | %.0f | %s | %d / %d | %.0f KiB | %d | %d | %d | %.1f s | %s | %s | %s | %s | %s |",
		r.Hosts, r.Workers, r.Wall.Seconds(), r.HostsPerMinute(), avail, r.EventsP50, r.EventsMax, float64(r.BytesP50)/1024, r.MaxRun, r.ActivitiesP50, r.TimersP50,
		r.CPU.Seconds(), per(r.CPU), mib(r.PeakRSS), mib(r.PeakRSS*100/int64(r.Hosts)), server, serverPer)
}

// devServer starts the temporal CLI's dev server on free loopback ports,
// in memory, and waits until it answers.
func devServer(cli string) (addr string, pid int, stop func(), err error) {
	ports := make([]int, 3)
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return "", 0, nil, err
		}
	}
	cmd := exec.Command(cli, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", strconv.Itoa(ports[0]),
		"--http-port", strconv.Itoa(ports[1]), "--metrics-port", strconv.Itoa(ports[2]), "--log-level", "error")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return "", 0, nil, err
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	addr = fmt.Sprintf("127.0.0.1:%d", ports[0])
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := client.DialContext(ctx, client.Options{HostPort: addr})
		cancel()
		if err == nil {
			_, err = c.CheckHealth(context.Background(), &client.CheckHealthRequest{})
			c.Close()
			if err == nil {
				return addr, cmd.Process.Pid, stop, nil
			}
		}
		if time.Now().After(deadline) {
			stop()
			return "", 0, nil, errors.New("the dev server did not answer within a minute")
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || x <= 0 {
			return nil, fmt.Errorf("bad count %q", f)
		}
		out = append(out, x)
	}
	return out, nil
}

// loadavg is the machine's load average, to note beside the figures.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
