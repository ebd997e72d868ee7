.PHONY: test integration generate check quickstart

# The unit suite: needs nothing but Go.
test:
	go test -race ./...

# Real components (sshd, dhcpd, kea, Ironic, Temporal) on loopback; root on Debian/Ubuntu.
integration:
	scripts/integration

generate:
	go generate ./...

quickstart:
	go run ./examples/quickstart
