//go:build !unix

package media

// flock is a no-op where flock does not exist.
func flock(string) (func(), error) { return func() {}, nil }
