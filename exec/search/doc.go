// Package search is seed 001's Local Search tool over real ugrep or ripgrep:
// request validation, sandboxed ordered file selection, backend runs, parsing, truncation.
//
// API for callers (the `vigil search` command and the Search pane):
//
//   - DecodeRequest parses FR-LS-02 JSON strictly (unknown fields are BadArgs;
//     `glob` is the deprecated alias of include_glob).
//   - Options carries the sandbox root and deny globs, [tools.search] values and
//     the backend choice (auto|ugrep|rg); DefaultOptions fills config defaults.
//   - Validate(req, opts) returns a *ToolError naming the field and the rule,
//     without searching (it does ask the backend to compile the regex).
//   - Run(ctx, req, opts, emit) streams Batches in final order and returns the
//     Response (FR-LS-05; Response.WriteJSON, or AppendJSON, is what
//     `vigil search` prints; WriteJSON streams through a small buffer).
//     Cancelling ctx kills the backend's process group.
//   - DetectBackends(opts) lists candidate binaries with versions.
//
// How it stays deterministic and identical across backends: Vigil walks the
// tree itself in Appendix A byte order (NFC keys; directories keyed "name/"),
// applying hidden, ignore files (rg 13's rules, so rg can walk too), include/
// exclude, deny, depth and max_files. On the ordered path each chunk's files
// are sniffed in parallel (one open, fstat and 8 KiB read: over
// max_file_size_bytes or a NUL byte means skipped, still counted; with
// ugrep and a pattern that cannot match a NUL, files are only stat'ed
// before and sniffed once they matched, when Vigil reads their lines); the
// backends only match, over explicit file lists in ordered chunks (growing
// from 32 files; two at a time, each backend multi-threaded), and Vigil
// regroups their output per file and delivers a chunk's files in walk order
// once its backend has exited, when every per-file error (some come from the
// backend's stderr) is known. Non-streaming searches take a walk instead
// (walkrun.go; rgwalk.go, ugwalk.go): the backend walks the tree itself, Vigil's walker
// only counts and cross-checks (rg) or filters ugrep's superset (ugrep reads
// no ignore file), results are sorted at the end, and anything that would
// make the answer differ (truncation, max_files, a disagreement: walkverdict.go) hands the
// request to the ordered path. Vigil reads context lines itself.
// Case-insensitive searches are rewritten into ASCII-only letter classes so
// neither backend folds Unicode.
//
// The design, and how the two backends are made to agree, is told in docs/search.md.
package search
