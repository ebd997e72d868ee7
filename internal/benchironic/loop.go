package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hostforge/hostforge"
	adapter "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/ironic"
)

// runLoop is the limit: the same writes as hostforge, each wait a GET every
// poll (20 ms), each NodeLocked 409 retried after poll. Nothing can notice a
// transition much sooner without Ironic pushing it.
func runLoop(ctx context.Context, endpoint string, nodes []benchNode, poll time.Duration) (time.Duration, error) {
	c, err := adapter.New(ctx, adapter.Config{Endpoint: endpoint, Timeout: clientTimeout})
	if err != nil {
		return 0, err
	}
	errs := make([]error, len(nodes))
	start := time.Now()
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := loopOne(ctx, c, n, poll); err != nil {
				errs[i] = fmt.Errorf("loop: %s: %w", n.Name, err)
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	return wall, errors.Join(errs...)
}

func loopOne(ctx context.Context, c *adapter.Client, n benchNode, poll time.Duration) error {
	// write retries a write refused with NodeLocked after one poll.
	write := func(fn func() error) error {
		for {
			err := fn()
			if !ironic.IsNodeLocked(err) {
				return err
			}
			if err := sleep(ctx, poll); err != nil {
				return err
			}
		}
	}
	// until polls the node every poll until ok.
	until := func(uuid string, ok func(ironic.Node) (bool, error)) error {
		for {
			node, err := c.GetNode(ctx, uuid)
			if err != nil {
				return err
			}
			if done, err := ok(node); done || err != nil {
				return err
			}
			if err := sleep(ctx, poll); err != nil {
				return err
			}
		}
	}
	state := func(want string) func(ironic.Node) (bool, error) {
		return func(node ironic.Node) (bool, error) {
			if node.ProvisionState == want && node.TargetProvisionState == "" {
				return true, nil
			}
			if ironic.Stable(node) && node.ProvisionState != ironic.StateEnroll && node.ProvisionState != ironic.StateManageable {
				return false, fmt.Errorf("node went to %q (last_error %s)", node.ProvisionState, node.LastError)
			}
			return false, nil
		}
	}

	var node ironic.Node
	err := write(func() (err error) {
		node, err = c.CreateNode(ctx, ironic.NodeCreate{Name: n.Name, Driver: n.Driver, Interfaces: n.Interfaces, DriverInfo: n.DriverInfo, Properties: n.Properties, ResourceClass: n.ResourceClass})
		return err
	})
	if err != nil {
		return err
	}
	for _, p := range n.Ports {
		p.NodeUUID = node.UUID
		if err := write(func() error { _, err := c.CreatePort(ctx, p); return err }); err != nil {
			return err
		}
	}
	if err := write(func() error { return c.ChangeProvisionState(ctx, node.UUID, ironic.ActionManage) }); err != nil {
		return err
	}
	if err := until(node.UUID, state(ironic.StateManageable)); err != nil {
		return err
	}
	if err := write(func() error { return c.ChangePowerState(ctx, node.UUID, ironic.PowerOn) }); err != nil {
		return err
	}
	if err := until(node.UUID, func(node ironic.Node) (bool, error) {
		return node.PowerState == ironic.PowerOn && node.TargetPowerState == "", nil
	}); err != nil {
		return err
	}
	if err := write(func() error { _, err := c.UpdateNode(ctx, node.UUID, n.Patch); return err }); err != nil {
		return err
	}
	if err := write(func() error { return c.SetTraits(ctx, node.UUID, n.Traits) }); err != nil {
		return err
	}
	if err := write(func() error { return c.ChangeProvisionState(ctx, node.UUID, ironic.ActionProvide) }); err != nil {
		return err
	}
	return until(node.UUID, state(ironic.StateAvailable))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func isNotFound(err error) bool { return errors.Is(err, hostforge.ErrNotFound) }
