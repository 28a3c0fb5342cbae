package search

// walkSpanCap is how many matches a walk holds before the ordered path
// answers instead. Lines are capped (max_results) and so are matches per
// line (maxSubmatches), but a walk holds the matches of files it will drop
// at the end (binary files, ugrep's in files Vigil does not search:
// ugwalk.go) until then. 1M matches is 16 MB of spans; the Go tree's
// search for "err" holds 181k.
const walkSpanCap = 1 << 20
