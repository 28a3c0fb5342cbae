package memory

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
)

// Bulk import (issue 21): a large import into a small store inserts its rows
// with the secondary indexes dropped and builds them once at the end, in the
// same transaction: SQLite builds an index from sorted keys far faster than
// it inserts 1,000,000 random created_at keys one by one. A store already
// holding many memories keeps its indexes (rebuilding them would cost what
// it holds, not what is imported). A failed import rolls the drop back.
const bulkMaxExisting = 100_000

// importCacheKiB is the page cache of the import's connection: a large
// transaction's dirty pages then stay in memory instead of spilling.
const importCacheKiB = 256 << 10

// cacheKiB is every other connection's page cache (Open's DSN).
const cacheKiB = 16 << 10

// secondaryIndexes are migration 1's indexes that a bulk import rebuilds.
var secondaryIndexes = []struct{ name, ddl string }{
	{"memories_source_created", `CREATE INDEX memories_source_created ON memories(source, created_at)`},
	{"memories_created", `CREATE INDEX memories_created ON memories(created_at)`},
	{"memory_tags_memory", `CREATE INDEX memory_tags_memory ON memory_tags(memory_id)`},
}

type bulkImport struct{ dropped bool }

// beginBulk drops the secondary indexes of a store holding at most
// bulkMaxExisting memories.
func beginBulk(ctx context.Context, tx *sql.Tx) (*bulkImport, error) {
	b := &bulkImport{}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM memories LIMIT ?)`, bulkMaxExisting+1).Scan(&n); err != nil {
		return nil, err
	}
	if n > bulkMaxExisting {
		return b, nil
	}
	for _, ix := range secondaryIndexes {
		if _, err := tx.ExecContext(ctx, `DROP INDEX IF EXISTS `+ix.name); err != nil {
			return nil, err
		}
	}
	b.dropped = true
	return b, nil
}

// rebuild creates the dropped indexes again, before the commit.
func (b *bulkImport) rebuild(ctx context.Context, tx *sql.Tx) error {
	if !b.dropped {
		return nil
	}
	for _, ix := range secondaryIndexes {
		if _, err := tx.ExecContext(ctx, ix.ddl); err != nil {
			return err
		}
	}
	return nil
}

// batchRows is how many memories one INSERT statement carries: each
// database/sql call costs microseconds of Go and driver work, so a row a
// statement would cost more than the row itself.
const batchRows = 128

// batchInserter stores memories batchRows at a time with ids it assigns
// itself (max(id)+1 on: what SQLite would choose, since the write
// transaction excludes other writers), so the tags can be inserted in
// batches too.
type batchInserter struct {
	tx      *sql.Tx
	next    int64 // the id the next memory gets
	pending []NewMemory
	sql     strings.Builder
	args    []any
}

func newBatchInserter(ctx context.Context, tx *sql.Tx) (*batchInserter, error) {
	var maxID sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(id) FROM memories`).Scan(&maxID); err != nil {
		return nil, err
	}
	return &batchInserter{tx: tx, next: maxID.Int64 + 1}, nil
}

func (b *batchInserter) add(ctx context.Context, m NewMemory) error {
	b.pending = append(b.pending, m)
	if len(b.pending) == batchRows {
		return b.flush(ctx)
	}
	return nil
}

// flush inserts the pending memories and their tags.
func (b *batchInserter) flush(ctx context.Context) error {
	if len(b.pending) == 0 {
		return nil
	}
	b.sql.Reset()
	b.args = b.args[:0]
	b.sql.WriteString(`INSERT INTO memories(id, text, tags, source, created_at) VALUES `)
	ntags := 0
	for i, m := range b.pending {
		tags, err := json.Marshal(m.Tags)
		if err != nil {
			return err
		}
		if i > 0 {
			b.sql.WriteByte(',')
		}
		b.sql.WriteString(`(?,?,?,?,?)`)
		b.args = append(b.args, b.next+int64(i), m.Text, string(tags), m.Source, m.CreatedAt.UTC().UnixMilli())
		ntags += len(m.Tags)
	}
	if _, err := b.tx.ExecContext(ctx, b.sql.String(), b.args...); err != nil {
		return err
	}
	if ntags > 0 {
		b.sql.Reset()
		b.args = b.args[:0]
		b.sql.WriteString(`INSERT INTO memory_tags(memory_id, tag) VALUES `)
		for i, m := range b.pending {
			for _, t := range m.Tags {
				if len(b.args) > 0 {
					b.sql.WriteByte(',')
				}
				b.sql.WriteString(`(?,?)`)
				b.args = append(b.args, b.next+int64(i), t)
			}
		}
		if _, err := b.tx.ExecContext(ctx, b.sql.String(), b.args...); err != nil {
			return err
		}
	}
	b.next += int64(len(b.pending))
	b.pending = b.pending[:0]
	return nil
}
