// Package homeguard says who besides the executor's account can write
// Vigil's home. Whoever can write the home can approve a task (`vigil
// approve` is a write to it) or change what Vigil trusts (config, keys,
// records), so `vigil serve` refuses a home others may write and `vigil
// doctor` reports it. The rules are OpenSSH's StrictModes ones: each file
// and folder of the home is owned by the account (or root) and is neither
// group- nor other-writable; each folder above it, up to /, is owned by the
// account or root and, when others may write it, has the sticky bit (so
// nobody but the owner of an entry can rename it away, as in /tmp).
package homeguard

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path"
	"strconv"
	"strings"
)

// Problem is one path that lets another account change the home.
type Problem struct {
	// Path is the file or folder.
	Path string
	// Mode is its permission bits (and the sticky bit for a parent).
	Mode fs.FileMode
	// UID is its owner.
	UID int
	// Parent is true for a folder above the home, false for one of the
	// home's own files and folders.
	Parent bool
	// Why says in plain words who may write it.
	Why string
	// Fix is the command that tightens it.
	Fix string
}

// String is the problem as one line: "PATH (MODE) owned by NAME: WHY (FIX)".
func (p Problem) String() string {
	return fmt.Sprintf("%s (%s) owned by %s: %s (%s)", p.Path, p.Mode, Account(p.UID), p.Why, p.Fix)
}

// Account names a uid: "alice" or "uid 1001" when the system has no name
// for it.
func Account(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return u.Username
	}
	return "uid " + strconv.Itoa(uid)
}

// Join lists problems on one line, "; " between them.
func Join(ps []Problem) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, "; ")
}

// Owner is who a path belongs to and its mode, from stat(2).
type Owner struct {
	UID  int
	Mode fs.FileMode
}

// ServiceAccount says whether uid is an account nobody logs in as: its
// shell in /etc/passwd is nologin or false. Such an account runs the
// executor; an account with a login shell is a person's, and so any agent
// the person starts. An account missing from /etc/passwd (a directory
// service's) counts as a person's: the cautious answer.
func ServiceAccount(uid int) bool {
	return serviceAccount(uid, "/etc/passwd")
}

func serviceAccount(uid int, passwd string) bool {
	b, err := os.ReadFile(passwd)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ":")
		if len(f) != 7 || f[2] != strconv.Itoa(uid) {
			continue
		}
		switch path.Base(strings.TrimSpace(f[6])) {
		case "nologin", "false":
			return true
		}
		return false
	}
	return false
}
