package cli

import (
	"net"
	"strconv"
	"strings"
)

// checkAddress refuses a host:port flag value that cannot be dialled, so
// a typo is exit code 2 naming the flag before anything is contacted,
// not a dial error from deep inside a client library.
func checkAddress(flag, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return inputErr("--%s %q: want host:port, e.g. 127.0.0.1:7233 (%v)", flag, addr, err)
	}
	if host == "" || strings.ContainsAny(host, "/@ ") {
		return inputErr("--%s %q: want host:port with a host name or address, e.g. 127.0.0.1:7233", flag, addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return inputErr("--%s %q: the port must be a number from 1 to 65535", flag, addr)
	}
	return nil
}

// check refuses a malformed --temporal address.
func (t *temporalFlags) check() error {
	if t.address == "" {
		return nil
	}
	return checkAddress("temporal", t.address)
}
