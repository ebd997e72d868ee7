package redfish

// Transports is the number of transports c has built, one per TLS profile.
func Transports(c *Connector) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.transports)
}
