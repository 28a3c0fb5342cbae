package memory

// The MCP server itself lives in exec/mcpserver; this file holds the store
// operations its list_memories and delete_memory tools need.

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ToolName is the MCP name of the search tool.
const ToolName = "search_memory"

// InputSchema is the search_memory tool's JSON Schema as advertised to MCP
// clients. The tool validates arguments itself (the seed's messages), so the
// schema is documentation for clients, not the gate.
var InputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 1000,
      "description": "Natural language search query (trimmed; not whitespace-only)"},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10,
      "description": "Maximum number of results"},
    "filters": {
      "type": "object",
      "description": "Optional metadata filters; {} means none",
      "properties": {
        "tags": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 100}, "maxItems": 32,
          "description": "Only memories with ALL these tags (exact, case-sensitive)"},
        "source": {"type": "string", "minLength": 1, "maxLength": 100,
          "description": "Only memories from this source (exact, case-sensitive)"},
        "date_from": {"type": "string", "format": "date", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
          "description": "Only memories created on or after this day (YYYY-MM-DD, UTC)"},
        "date_to": {"type": "string", "format": "date", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
          "description": "Only memories created on or before this day (YYYY-MM-DD, UTC); not before date_from"}
      },
      "additionalProperties": false
    }
  },
  "required": ["query"],
  "additionalProperties": false
}`)

// Cursor is a position in the newest-first listing: the last memory shown.
type Cursor struct {
	CreatedAt int64 // Unix milliseconds
	ID        int64
}

// String encodes the cursor for clients ("<ms>.<id>"; opaque to them).
func (c Cursor) String() string { return fmt.Sprintf("%d.%d", c.CreatedAt, c.ID) }

// ParseCursor reads what Cursor.String wrote.
func ParseCursor(s string) (Cursor, error) {
	a, b, ok := strings.Cut(s, ".")
	ms, err1 := strconv.ParseInt(a, 10, 64)
	id, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return Cursor{}, fmt.Errorf("not a cursor this server gave")
	}
	return Cursor{CreatedAt: ms, ID: id}, nil
}

// List returns up to limit memories matching f, newest first (then highest
// id), after the cursor when one is given. next is set when more remain.
func (s *Store) List(ctx context.Context, f Filters, limit int, after *Cursor) (out []Memory, next *Cursor, err error) {
	done, err := s.begin()
	if err != nil {
		return nil, nil, err
	}
	defer done()
	var b strings.Builder
	b.WriteString(`SELECT m.id, m.text, m.tags, m.source, m.created_at FROM memories m WHERE 1`)
	args := filterSQL(&b, nil, f)
	if after != nil {
		b.WriteString(` AND (m.created_at < ? OR (m.created_at = ? AND m.id < ?))`)
		args = append(args, after.CreatedAt, after.CreatedAt, after.ID)
	}
	b.WriteString(` ORDER BY m.created_at DESC, m.id DESC LIMIT ?`)
	args = append(args, limit+1)
	q := b.String()
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, nil, classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var m Memory
		var tags string
		var created int64
		if err := rows.Scan(&m.ID, &m.Text, &tags, &m.Source, &created); err != nil {
			return nil, nil, classify(err)
		}
		if err := json.Unmarshal([]byte(tags), &m.Tags); err != nil {
			return nil, nil, fmt.Errorf("memory %d: tags column: %w", m.ID, err)
		}
		m.CreatedAt = time.UnixMilli(created).UTC()
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, classify(err)
	}
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		next = &Cursor{CreatedAt: last.CreatedAt.UnixMilli(), ID: last.ID}
	}
	return out, next, nil
}

// Delete removes one memory (and its tags and index entry); ErrNotFound when
// no memory has that id.
func (s *Store) Delete(ctx context.Context, id int64) error {
	done, err := s.begin()
	if err != nil {
		return err
	}
	defer done()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return classify(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM memory_tags WHERE memory_id = ?`, id); err != nil {
		return classify(err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM memories WHERE id = ?`, id)
	if err != nil {
		return classify(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return classify(tx.Commit())
}
