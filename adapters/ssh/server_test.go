package ssh_test

import "context"

// memVault is a tiny ssh.Vault. The in-process SSH server the tests dial is
// package sshtest.
type memVault map[string]map[string]string

func (v memVault) Item(_ context.Context, name string) (map[string]string, error) {
	it, ok := v[name]
	if !ok {
		return nil, errNotFound
	}
	cp := map[string]string{}
	for k, val := range it {
		cp[k] = val
	}
	return cp, nil
}
