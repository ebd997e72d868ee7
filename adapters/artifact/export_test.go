package artifact

// Hashes counts the files the cache hashed to verify them.
func (c *Cache) Hashes() int64 { return c.hashes.Load() }
