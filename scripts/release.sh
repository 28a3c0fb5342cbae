#!/usr/bin/env bash
# Builds a release binary of vigil.
#
#   scripts/release.sh [VERSION] [OUT]
#
# VERSION defaults to the tag on HEAD (git describe), else the version in
# cli/root.go; OUT defaults to dist/vigil-GOOS-GOARCH (GOOS and GOARCH from
# the environment, so GOOS=darwin GOARCH=arm64 scripts/release.sh cross-builds).
#
# -trimpath keeps the build machine's paths out of the binary. The commit
# and the dirty flag are stamped with -ldflags -X: the go command stamps them
# into the build info itself only in a checkout whose .git is a folder (not
# in a git worktree, nor when GOFLAGS has -buildvcs=false), and `vigil
# version` reads the build info first, these values when it has none.
# CGO_ENABLED=0: every dependency is pure Go (SQLite is modernc.org/sqlite),
# so the binary is static and runs on any Linux of its architecture.
# At run time vigil needs ugrep or ripgrep on PATH (and mpv for the mpv driver).
set -euo pipefail
cd "$(dirname "$0")/.."

pkg=github.com/vigil-dev/vigil/cli
version=${1:-$(git describe --tags --exact-match --dirty 2>/dev/null || true)}
commit=$(git rev-parse HEAD 2>/dev/null || true)
modified=false
if [ -n "$commit" ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	modified=true
fi
out=${2:-dist/vigil-$(go env GOOS)-$(go env GOARCH)}

ldflags="-s -w -X $pkg.Commit=$commit -X $pkg.Modified=$modified"
if [ -n "$version" ]; then
	ldflags="$ldflags -X $pkg.Version=$version"
fi
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out" .
echo "built $out ($(du -h "$out" | cut -f1))" >&2
