package memory

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Limits on what a memory may hold. They keep one import line or one MCP
// response from growing without bound.
const (
	MaxTextRunes   = 100_000
	MaxTags        = 32
	MaxTagRunes    = 100
	MaxSourceRunes = 100
)

// Memory is one stored memory.
type Memory struct {
	ID        int64     `json:"id"`
	Text      string    `json:"text"`
	Tags      []string  `json:"tags"`
	Source    string    `json:"source"`
	CreatedAt time.Time `json:"created_at"`
}

// NewMemory is what Add stores. A zero CreatedAt means "now" (the store's clock).
type NewMemory struct {
	Text      string
	Tags      []string
	Source    string
	CreatedAt time.Time
}

// Options tune a Store. The zero value is usable.
type Options struct {
	// BusyTimeout is how long a statement waits for another connection's lock
	// before failing with "Memory database is locked" (default 5s).
	BusyTimeout time.Duration
	// Now is the clock for memories added without a date (default time.Now).
	Now func() time.Time
	// Embedder, when set, makes search hybrid (keyword + meaning) and gives
	// added memories a vector (issue 27). Nil: keyword search only.
	Embedder Embedder
	// EmbedRequired makes a search fail when the query cannot be embedded;
	// otherwise it answers by keyword and logs the failure once.
	EmbedRequired bool
	// EmbedDimensions is the configured dimension (0: the model's own);
	// Reindex replaces vectors of another dimension.
	EmbedDimensions int
	// Log receives embedder failures (default: discarded).
	Log *slog.Logger
}

// Store is the memory database. It is safe for concurrent use.
type Store struct {
	db    *sql.DB
	path  string // the database file, whose folder Changes watches
	now   func() time.Time
	tiers tierLimits // thresholds of the ranking tiers (tiers.go)

	emb        Embedder
	required   bool
	wantDims   int
	log        *slog.Logger
	warnedOnce atomic.Bool // a failing embedder is logged once per Store
	vcache     vectorCache

	mu     sync.RWMutex
	closed bool
}

// ErrNotFound is returned by Get for an id that holds no memory.
var ErrNotFound = errors.New("memory not found")

// Open opens (creating if needed) the database at path and migrates its
// schema. A damaged or locked file gives a *CoreError.
func Open(path string, opt Options) (*Store, error) {
	if path == "" {
		return nil, &CoreError{Msg: "Memory database path is empty"}
	}
	if opt.BusyTimeout <= 0 {
		opt.BusyTimeout = 5 * time.Second
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	// What agents remembered is as private as the rest of the home: the file
	// is created 0600 before SQLite would create it under the umask (usually
	// 0644); SQLite gives its -wal and -shm files the database file's mode.
	if f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
		f.Close()
	}
	// A "file:" URI keeps '?' and '#' in the path from being read as the DSN's
	// query; the driver's own parameters are ignored by SQLite's URI parser.
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	dsn := fmt.Sprintf("file:%s?_busy_timeout=%d&_journal_mode=WAL&_synchronous=NORMAL&_foreign_keys=1&_txlock=immediate&_pragma=cache_size(-%d)",
		esc, opt.BusyTimeout.Milliseconds(), cacheKiB)
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, classify(err)
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	s := &Store{db: db, path: path, now: opt.Now, tiers: defaultLimits, emb: opt.Embedder, required: opt.EmbedRequired,
		wantDims: opt.EmbedDimensions, log: opt.Log}
	if err := s.migrate(context.Background()); err != nil {
		db.Close()
		return nil, classify(err)
	}
	return s, nil
}

// Close releases the database. Later calls fail with a *CoreError.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.db.Close()
}

// begin guards every operation: a closed store is a core failure, not a Go
// "sql: database is closed" that would fall into the generic category.
func (s *Store) begin() (func(), error) {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return nil, &CoreError{Msg: "Database connection failed: memory database is closed"}
	}
	return s.mu.RUnlock, nil
}

// Add validates and stores one memory and returns its id.
func (s *Store) Add(ctx context.Context, m NewMemory) (int64, error) {
	done, err := s.begin()
	if err != nil {
		return 0, err
	}
	defer done()
	m, err = s.normalise(m)
	if err != nil {
		return 0, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, classify(err)
	}
	defer tx.Rollback()
	ins, err := prepareInsert(ctx, tx)
	if err != nil {
		return 0, classify(err)
	}
	defer ins.close()
	id, err := ins.insert(ctx, m)
	if err != nil {
		return 0, classify(err)
	}
	if err := indexFrom(ctx, tx, id); err != nil {
		return 0, classify(err)
	}
	if err := tx.Commit(); err != nil {
		return 0, classify(err)
	}
	s.embedOne(ctx, id, m.Text)
	return id, nil
}

// Get returns the full memory with the given id, or ErrNotFound.
func (s *Store) Get(ctx context.Context, id int64) (Memory, error) {
	done, err := s.begin()
	if err != nil {
		return Memory{}, err
	}
	defer done()
	row := s.db.QueryRowContext(ctx,
		`SELECT id, text, tags, source, created_at FROM memories WHERE id = ?`, id)
	var m Memory
	var tags string
	var created int64
	if err := row.Scan(&m.ID, &m.Text, &tags, &m.Source, &created); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return Memory{}, ErrNotFound
		}
		return Memory{}, classify(err)
	}
	if err := json.Unmarshal([]byte(tags), &m.Tags); err != nil {
		return Memory{}, fmt.Errorf("memory %d: tags column: %w", id, err)
	}
	m.CreatedAt = time.UnixMilli(created).UTC()
	return m, nil
}

// Count returns how many memories are stored.
func (s *Store) Count(ctx context.Context) (int, error) {
	done, err := s.begin()
	if err != nil {
		return 0, err
	}
	defer done()
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM memories`).Scan(&n); err != nil {
		return 0, classify(err)
	}
	return n, nil
}

// FieldError is one validation failure: the field and the rule it broke.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e FieldError) String() string { return e.Field + ": " + e.Message }

// InvalidError lists every validation failure of one input, in field order.
type InvalidError struct{ Fields []FieldError }

func (e *InvalidError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.String()
	}
	return strings.Join(parts, "; ")
}

// normalise validates a memory and fills its defaults.
func (s *Store) normalise(m NewMemory) (NewMemory, error) {
	var errs []FieldError
	bad := func(f, msg string) { errs = append(errs, FieldError{f, msg}) }
	m.Text = strings.TrimSpace(m.Text)
	switch n := utf8.RuneCountInString(m.Text); {
	case !utf8.ValidString(m.Text):
		bad("text", "must be valid UTF-8 text")
	case n == 0:
		bad("text", "must not be empty")
	case n > MaxTextRunes:
		bad("text", fmt.Sprintf("ensure this value has at most %d characters", MaxTextRunes))
	}
	if len(m.Tags) > MaxTags {
		bad("tags", fmt.Sprintf("ensure this list has at most %d items", MaxTags))
	}
	seen := map[string]bool{}
	tags := make([]string, 0, len(m.Tags))
	for _, t := range m.Tags {
		t = strings.TrimSpace(t)
		switch {
		case !utf8.ValidString(t):
			bad("tags", "each tag must be valid UTF-8 text")
		case t == "":
			bad("tags", "ensure each tag has at least 1 character")
		case utf8.RuneCountInString(t) > MaxTagRunes:
			bad("tags", fmt.Sprintf("ensure each tag has at most %d characters", MaxTagRunes))
		case seen[t]:
			// a repeated tag adds nothing; keep the first occurrence's position
		default:
			seen[t] = true
			tags = append(tags, t)
		}
	}
	m.Tags = tags
	m.Source = strings.TrimSpace(m.Source)
	if !utf8.ValidString(m.Source) {
		bad("source", "must be valid UTF-8 text")
	} else if utf8.RuneCountInString(m.Source) > MaxSourceRunes {
		bad("source", fmt.Sprintf("ensure this value has at most %d characters", MaxSourceRunes))
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = s.now()
	}
	if y := m.CreatedAt.UTC().Year(); y < 1 || y > 9999 {
		bad("created_at", "year must be between 0001 and 9999")
	}
	if len(errs) > 0 {
		return m, &InvalidError{Fields: dedupe(errs)}
	}
	return m, nil
}

func dedupe(errs []FieldError) []FieldError {
	out := errs[:0]
	seen := map[FieldError]bool{}
	for _, e := range errs {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}

// inserter holds the prepared statements of one transaction.
type inserter struct {
	mem, tag *sql.Stmt
}

func prepareInsert(ctx context.Context, tx *sql.Tx) (*inserter, error) {
	mem, err := tx.PrepareContext(ctx,
		`INSERT INTO memories(text, tags, source, created_at) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return nil, err
	}
	tag, err := tx.PrepareContext(ctx, `INSERT INTO memory_tags(memory_id, tag) VALUES (?, ?)`)
	if err != nil {
		mem.Close()
		return nil, err
	}
	return &inserter{mem: mem, tag: tag}, nil
}

func (in *inserter) close() { in.mem.Close(); in.tag.Close() }

func (in *inserter) insert(ctx context.Context, m NewMemory) (int64, error) {
	tags, err := json.Marshal(m.Tags)
	if err != nil {
		return 0, err
	}
	res, err := in.mem.ExecContext(ctx, m.Text, string(tags), m.Source, m.CreatedAt.UTC().UnixMilli())
	if err != nil {
		return 0, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	for _, t := range m.Tags {
		if _, err := in.tag.ExecContext(ctx, id, t); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// indexFrom adds every memory with id >= first to the FTS index in one
// statement, so FTS5 builds one segment instead of one per row.
func indexFrom(ctx context.Context, tx *sql.Tx, first int64) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO memories_fts(rowid, text, tags) SELECT id, text, tags FROM memories WHERE id >= ? ORDER BY id`, first)
	return err
}

// classify turns driver failures into the tool's categories. Messages name
// the condition, never the file's path.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var ce *CoreError
	var se *SearchError
	if errors.As(err, &ce) || errors.As(err, &se) {
		return err
	}
	var le *sqlite.Error
	if errors.As(err, &le) {
		switch le.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return &CoreError{Msg: "Memory database is locked by another process", Err: err}
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return &CoreError{Msg: "Memory database is damaged", Err: err}
		case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_AUTH:
			return &CoreError{Msg: "Memory database cannot be opened", Err: err}
		case sqlite3.SQLITE_IOERR:
			return &CoreError{Msg: "Memory database I/O failed", Err: err}
		case sqlite3.SQLITE_FULL:
			return &CoreError{Msg: "Insufficient resources: disk full", Err: err}
		case sqlite3.SQLITE_NOMEM:
			return &CoreError{Msg: "Insufficient resources: out of memory", Err: err}
		}
		if strings.Contains(le.Error(), "no such table: memories_fts") ||
			strings.Contains(le.Error(), "no such table: main.memories_fts") {
			return &SearchError{Msg: "Full-text index not found", Err: err}
		}
		if strings.Contains(le.Error(), "no such table") {
			return &CoreError{Msg: "Memory database not initialized", Err: err}
		}
	}
	if errors.Is(err, sql.ErrConnDone) {
		return &CoreError{Msg: "Database connection failed", Err: err}
	}
	return err
}

// CoreError is a failure of the store itself (damaged, locked, closed, out of
// resources): the seed's "Processing error" category.
type CoreError struct {
	Msg string
	Err error
}

func (e *CoreError) Error() string { return e.Msg }
func (e *CoreError) Unwrap() error { return e.Err }

// SearchError is a failure of the search operation (missing or unusable
// index): the seed's "Search failed" category.
type SearchError struct {
	Msg string
	Err error
}

func (e *SearchError) Error() string { return e.Msg }
func (e *SearchError) Unwrap() error { return e.Err }
