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
//     Response (FR-LS-05; Response.AppendJSON is what `vigil search` prints).
//     Cancelling ctx kills the backend's process group.
//   - DetectBackends(opts) lists candidate binaries with versions.
//
// How it stays deterministic and identical across backends: Vigil walks the
// tree itself in Appendix A byte order (NFC keys; directories keyed "name/"),
// applying hidden, ignore files, include/exclude, deny, depth, max_files and
// max_file_size_bytes, and skips files with a NUL byte in their first 8 KiB.
// The backends only match: they get explicit file lists in ordered chunks
// (single-threaded each, several chunks in parallel) and Vigil reads context
// lines from the files itself. Case-insensitive searches are rewritten into
// ASCII-only letter classes so neither backend folds Unicode.
package search
