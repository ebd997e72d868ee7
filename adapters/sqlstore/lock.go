package sqlstore

import "hash/fnv"

// lockKey maps a lock name to PostgreSQL's 64-bit advisory key.
func lockKey(name string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return int64(h.Sum64())
}
