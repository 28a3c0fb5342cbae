// Package memory is Vigil's memory store (SQLite with an FTS5 index) and the
// search_memory tool of seed 002 that MCP clients, the CLI and the pane share.
//
// # Relevance score
//
// FTS5's bm25() returns a non-positive number where more negative means more
// relevant. With s = -bm25(memories_fts, 1.0, 0.5) (text weighted 1, tags 0.5)
// the score is
//
//	score = s / (s + 1)
//
// which is 0 for no evidence, rises monotonically with s and stays below 1, so
// it lies in [0, 1] and, unlike a score normalised by the best hit of a query,
// means the same thing from one query to the next (s = 1 gives 0.50, s = 4
// gives 0.80, s = 9 gives 0.90). FTS5 floors a term's idf at 1e-6 when the term
// occurs in at least half of the memories, so such terms add almost nothing.
//
// # Query and filters
//
// A query is split into words (runs of Unicode letters and digits, lowercased,
// at most 64 distinct) and matched as "w1" OR "w2" OR …, so natural-language
// questions find memories containing any of their words and BM25 ranks those
// containing more (and rarer) words first. Words are quoted, so FTS5 syntax in
// a query is data, never operators. Filters are SQL conditions on the same
// statement: tags with AND logic (exact, case-sensitive), source exact and
// case-sensitive, date_from/date_to inclusive calendar days in UTC. Ties in
// score are broken by newest first, then highest id.
//
// # Speed
//
// BM25 must be computed for every match, so a query's cost grows with how
// many memories contain its commonest word. SearchMemory therefore ranks bare
// (id, score) pairs first and reads full rows only for the best few (plus any
// tie at the limit); a date-only filter that most memories pass is applied to
// the best-ranked pairs instead of to every match. Whenever those shortcuts
// cannot prove their answer, the single ORDER BY … LIMIT statement runs, and
// tests check that every path returns exactly what that statement returns.
//
// A query matching more than 50,000 memories is ranked in tiers (tiers.go)
// that never score the bulk of its common words' matches: memories with a
// selective word first (exactly, with the full query's scores), then the
// most recent memories with common words, then, for words in half of the
// memories, the newest memories containing them. docs/memory.md has the rules.
//
// # Hybrid search
//
// With an Embedder (Options.Embedder) a search also ranks memories by the
// cosine similarity of their vectors to the query's and fuses the two lists
// by reciprocal rank fusion (hybrid.go); the score is the fused value over
// its maximum and Hit.Match says keyword, meaning or both.
package memory
