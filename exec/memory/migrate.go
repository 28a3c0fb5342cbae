package memory

import (
	"context"
	"fmt"
)

// migrations are applied in order; PRAGMA user_version records how many ran.
// Never edit a shipped step: append a new one.
var migrations = []string{
	// 1: memories, their tags (for AND filtering in SQL) and an external-content
	// FTS5 index over text and tags. Deletes and updates reach the index by
	// trigger; inserts are indexed by this package in one statement per
	// transaction (see indexFrom), because a per-row trigger makes FTS5 flush a
	// tiny segment at every statement and a 100,000-line import 3x slower.
	`CREATE TABLE memories (
		id         INTEGER PRIMARY KEY,
		text       TEXT    NOT NULL,
		tags       TEXT    NOT NULL DEFAULT '[]', -- JSON array, order as given
		source     TEXT    NOT NULL DEFAULT '',
		created_at INTEGER NOT NULL              -- Unix milliseconds, UTC
	);
	CREATE INDEX memories_source_created ON memories(source, created_at);
	CREATE INDEX memories_created ON memories(created_at);
	CREATE TABLE memory_tags (
		memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
		tag       TEXT    NOT NULL,
		PRIMARY KEY (tag, memory_id)
	) WITHOUT ROWID;
	CREATE INDEX memory_tags_memory ON memory_tags(memory_id);
	CREATE VIRTUAL TABLE memories_fts USING fts5(
		text, tags,
		content='memories', content_rowid='id',
		tokenize='porter unicode61 remove_diacritics 2'
	);
	CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
		INSERT INTO memories_fts(memories_fts, rowid, text, tags) VALUES ('delete', old.id, old.text, old.tags);
	END;
	CREATE TRIGGER memories_au AFTER UPDATE ON memories BEGIN
		INSERT INTO memories_fts(memories_fts, rowid, text, tags) VALUES ('delete', old.id, old.text, old.tags);
		INSERT INTO memories_fts(rowid, text, tags) VALUES (new.id, new.text, new.tags);
	END;`,
}

// vectorTables hold issue 27's vectors, one per memory: the model that made
// it, its dimension and the float32 values (little-endian, scaled to unit
// length so that cosine similarity is a dot product). The version row changes
// with every vector change, so a search process knows when its in-memory copy
// is stale. They are created with IF NOT EXISTS on every open instead of by a
// numbered migration: they are additive, so a database that has them stays
// usable by a build without hybrid search, which would refuse a higher
// user_version.
const vectorTables = `CREATE TABLE IF NOT EXISTS memory_vectors (
		memory_id INTEGER PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
		model     TEXT    NOT NULL,
		dim       INTEGER NOT NULL,
		vec       BLOB    NOT NULL
	);
	CREATE TABLE IF NOT EXISTS memory_vectors_version (
		id      INTEGER PRIMARY KEY CHECK (id = 1),
		version INTEGER NOT NULL
	);
	INSERT OR IGNORE INTO memory_vectors_version(id, version) VALUES (1, 0);
	CREATE TRIGGER IF NOT EXISTS memory_vectors_ai AFTER INSERT ON memory_vectors BEGIN
		UPDATE memory_vectors_version SET version = version + 1 WHERE id = 1;
	END;
	CREATE TRIGGER IF NOT EXISTS memory_vectors_au AFTER UPDATE ON memory_vectors BEGIN
		UPDATE memory_vectors_version SET version = version + 1 WHERE id = 1;
	END;
	CREATE TRIGGER IF NOT EXISTS memory_vectors_ad AFTER DELETE ON memory_vectors BEGIN
		UPDATE memory_vectors_version SET version = version + 1 WHERE id = 1;
	END;`

// SchemaVersion is the schema version this build writes.
var SchemaVersion = len(migrations)

func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for {
		// The version is read inside the (immediate) transaction so two
		// processes opening a fresh file at once never apply a step twice.
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		var v int
		if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
			tx.Rollback()
			return err
		}
		if v > len(migrations) {
			tx.Rollback()
			return &CoreError{Msg: fmt.Sprintf("Memory database schema version %d is newer than this build's %d", v, len(migrations))}
		}
		if v == len(migrations) {
			if _, err := tx.ExecContext(ctx, vectorTables); err != nil {
				tx.Rollback()
				return err
			}
			return tx.Commit()
		}
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			tx.Rollback()
			return err
		}
		// PRAGMA takes no bound parameters; v+1 is our own integer.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, v+1)); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
}
