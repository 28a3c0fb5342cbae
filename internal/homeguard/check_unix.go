//go:build unix

package homeguard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Check looks at the home's own files and folders (own; missing ones, and
// those this process may not reach, are skipped) as the account
// uid would run Vigil on them, and at every folder above them up to /.
// Symbolic links are followed: both the folders above the link and those
// above its target count. It returns the problems found, in the order of
// own, each path once; an error only when a path cannot be looked at.
func Check(uid int, own []string) ([]Problem, error) {
	c := checker{uid: uid, seen: map[string]bool{}, own: map[string]bool{}}
	var targets []string
	for _, p := range own {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		real, err := filepath.EvalSymlinks(abs)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			// not there, or behind a folder this account may not enter
			// (vigil doctor run by another account than the home's): the
			// folders it can see are checked, and keep the rest out of
			// reach of others as they keep it out of its own
			continue
		}
		if err != nil {
			return nil, err
		}
		c.own[abs], c.own[real] = true, true
		targets = append(targets, abs, real)
	}
	for _, p := range targets {
		if err := c.path(p); err != nil {
			return nil, err
		}
	}
	return c.problems, nil
}

type checker struct {
	uid      int
	own      map[string]bool // the home's own paths (absolute, and resolved)
	seen     map[string]bool
	problems []Problem
}

// path checks p and each folder above it.
func (c *checker) path(p string) error {
	for {
		if !c.seen[p] {
			c.seen[p] = true
			if err := c.one(p); err != nil {
				return err
			}
		}
		up := filepath.Dir(p)
		if up == p {
			return nil
		}
		p = up
	}
}

func (c *checker) one(p string) error {
	o, err := Stat(p)
	if err != nil {
		return err
	}
	byUs := o.UID == c.uid || o.UID == 0
	if c.own[p] {
		switch {
		case !byUs:
			c.add(p, o, false, "another account owns it and can change it", fmt.Sprintf("chown %s %s", Account(c.uid), p))
		case o.Mode&0o022 != 0:
			c.add(p, o, false, writers(o.Mode)+" may write it", "chmod go-w "+p)
		}
		return nil
	}
	switch {
	case !byUs:
		c.add(p, o, true, "a folder above the home owned by another account, which can rename the home away",
			fmt.Sprintf("move the home under folders owned by root or %s", Account(c.uid)))
	case o.Mode&0o022 != 0 && o.Mode&fs.ModeSticky == 0:
		c.add(p, o, true, "a folder above the home "+writers(o.Mode)+" may write, without the sticky bit, so they can rename the home away",
			"chmod go-w "+p)
	}
	return nil
}

func (c *checker) add(p string, o Owner, parent bool, why, fix string) {
	c.problems = append(c.problems, Problem{Path: p, Mode: o.Mode, UID: o.UID, Parent: parent, Why: why, Fix: fix})
}

// writers says which of group and others the mode lets write.
func writers(m fs.FileMode) string {
	switch {
	case m&0o020 != 0 && m&0o002 != 0:
		return "its group and everyone"
	case m&0o020 != 0:
		return "its group"
	default:
		return "everyone"
	}
}

// Stat is p's owner and permission bits (with the sticky bit, shown as
// 't'), following a symbolic link.
func Stat(p string) (Owner, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return Owner{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Owner{}, fmt.Errorf("%s: no owner in stat", p)
	}
	return Owner{UID: int(st.Uid), Mode: fi.Mode() & (fs.ModePerm | fs.ModeSticky | fs.ModeDir)}, nil
}

// CanWrite says whether this process's account may write p (access(2)
// with W_OK: the owner, group and ACL rules, and root's power, as the
// kernel applies them).
func CanWrite(p string) bool {
	return syscall.Access(p, 0o2) == nil
}

// UID is this process's account.
func UID() int { return os.Getuid() }
