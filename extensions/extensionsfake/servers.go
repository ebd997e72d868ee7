package extensionsfake

import (
	"context"
	"fmt"
	"sync"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/intent"
)

// Servers is an extensions.ServerSource in memory: devices by name and
// inventories by instance and node. What it does not hold is
// hostforge.ErrNotFound, as NetBox and Ironic answer; Fail makes every
// read fail with an error (hostforge.ErrUnavailable, say) until cleared.
// It is safe for concurrent use.
type Servers struct {
	mu          sync.Mutex
	devices     map[string]intent.Device
	inventories map[string][]byte
	fail        error
	reads       int
}

// NewServers returns an empty source.
func NewServers() *Servers {
	return &Servers{devices: map[string]intent.Device{}, inventories: map[string][]byte{}}
}

// PutDevice stores a device's intent under its name.
func (s *Servers) PutDevice(d intent.Device) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.devices[d.Name] = d
}

// PutInventory stores a node's inspection inventory.
func (s *Servers) PutInventory(instance, node string, inv []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inventories[instance+"/"+node] = append([]byte(nil), inv...)
}

// Fail makes every read return err (nil clears it).
func (s *Servers) Fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = err
}

// Reads counts the reads made.
func (s *Servers) Reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// Device returns the device's intent.
func (s *Servers) Device(ctx context.Context, name string) (intent.Device, error) {
	if err := ctx.Err(); err != nil {
		return intent.Device{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	if s.fail != nil {
		return intent.Device{}, s.fail
	}
	d, ok := s.devices[name]
	if !ok {
		return intent.Device{}, fmt.Errorf("device %s: %w", name, hostforge.ErrNotFound)
	}
	return d, nil
}

// Inventory returns the node's inventory.
func (s *Servers) Inventory(ctx context.Context, instance, node string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	if s.fail != nil {
		return nil, s.fail
	}
	inv, ok := s.inventories[instance+"/"+node]
	if !ok {
		return nil, fmt.Errorf("node %s on %s has no inventory: %w", node, instance, hostforge.ErrNotFound)
	}
	return append([]byte(nil), inv...), nil
}
