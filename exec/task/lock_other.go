//go:build !unix

package task

// lockFile is a no-op where flock does not exist; the in-process lock still
// holds, but two Vigil processes could race on one task_id.
func lockFile(string) (func(), error) { return func() {}, nil }
