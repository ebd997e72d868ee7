// Package childenv builds the environment of a program hostforge starts on
// the worker (a firmware catalog's local script, ansible-playbook): the
// little of the worker's own environment such a program needs to run, and
// nothing else. The worker's environment holds its secrets (a database
// DSN, PGPASSWORD, API tokens); a program run for a catalog entry or an
// extension bundle — code from outside — must not read them.
package childenv

import "os"

// Base are the worker's variables every child gets, when set: where
// programs are, the home directory, the locale.
var Base = []string{"PATH", "HOME", "LANG"}

// Minimal returns Base and the named extra variables, as NAME=value, from
// the worker's environment (unset ones are left out). The caller appends
// the settings it means the child to have.
func Minimal(extra ...string) []string {
	env := make([]string, 0, len(Base)+len(extra))
	for _, names := range [][]string{Base, extra} {
		for _, k := range names {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
	}
	return env
}
