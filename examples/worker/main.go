// Command worker embeds hostforge's worker in a program of its own: the
// systems a config file names, a Temporal client, and adapters/worker run
// until interrupted — what 'hostforge worker' does, in a service's main.
//
//	hostforge lab &                  # serves a rack, writes lab/lab.yaml
//	go run ./examples/worker -config lab/lab.yaml -temporal 127.0.0.1:7233
//	hostforge enroll --config lab/lab.yaml --temporal 127.0.0.1:7233 --task-queue lab cpu-r1-u10
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/adapters/worker"
)

func main() {
	config := flag.String("config", "lab/lab.yaml", "config file naming the real systems")
	addr := flag.String("temporal", "127.0.0.1:7233", "Temporal frontend host:port")
	queue := flag.String("task-queue", "lab", "task queue to poll")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, *config, *addr, *queue); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, config, addr, queue string) error {
	cfg, err := wiring.Load(config)
	if err != nil {
		return err
	}
	sys, err := wiring.Open(ctx, cfg, wiring.Options{})
	if err != nil {
		return err
	}
	defer sys.Close()
	c, err := temporal.Dial(ctx, addr, "default", nil)
	if err != nil {
		return err
	}
	defer c.Close()
	w, err := worker.New(sys, c, worker.Options{TaskQueue: queue, Status: out})
	if err != nil {
		return err
	}
	return w.Run(ctx)
}
