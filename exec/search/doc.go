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
// applying hidden, ignore files, include/exclude, deny, depth and
// max_files. Each chunk's files are then sniffed in parallel (one open,
// fstat and 8 KiB read: over max_file_size_bytes or a NUL byte means
// skipped, still counted). The backends only match: they get explicit file
// lists in ordered chunks (32, 128, ... 8192 files; two chunks at a time,
// each backend multi-threaded), Vigil regroups their output per file and
// delivers a chunk's files in walk order once its backend has exited, when
// every per-file error (some come from the backend's stderr) is known.
// Vigil reads context lines itself. Case-insensitive searches are
// rewritten into ASCII-only letter classes so neither backend folds Unicode.
package search
