// Package dhcp is enrollment phase 1: it renders a host's DHCP reservation,
// uploads it to the DHCP server's configuration directory only when its
// content changed, and restarts and validates the service.
package dhcp
