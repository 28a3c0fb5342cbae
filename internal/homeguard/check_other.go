//go:build !unix

package homeguard

import "errors"

// errNoOwners: without Unix owners and modes there is nothing to check.
var errNoOwners = errors.New("file owners are not checked on this system")

// Check finds nothing where files have no Unix owner and mode.
func Check(int, []string) ([]Problem, error) { return nil, nil }

// Stat cannot say who owns a file here.
func Stat(string) (Owner, error) { return Owner{}, errNoOwners }

// CanWrite is unknown here: true, the cautious answer.
func CanWrite(string) bool { return true }

// UID is -1 where there are no Unix accounts.
func UID() int { return -1 }
