package memory

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolName is the MCP name of the tool.
const ToolName = "search_memory"

// InputSchema is the tool's JSON Schema as advertised to MCP clients. The
// tool validates arguments itself (the seed's messages), so the schema is
// documentation for clients, not the gate.
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

// NewMCPServer returns an MCP server exposing the tool as search_memory.
func NewMCPServer(tool *Tool, version string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "vigil", Title: "Vigil memory", Version: version}, nil)
	srv.AddTool(&mcp.Tool{
		Name:  ToolName,
		Title: "Search memory",
		Description: "Search the person's stored memories by relevance (full-text, BM25). " +
			"Returns a numbered list with scores, tags and 200-character previews.",
		InputSchema: InputSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args []byte
		if req != nil && req.Params != nil {
			args = req.Params.Arguments
		}
		if len(args) == 0 {
			// No arguments at all is the seed's empty dict: "query: field required".
			args = []byte(`{}`)
		}
		r := tool.Execute(ctx, args)
		return &mcp.CallToolResult{
			Content: []mcp.Content{&mcp.TextContent{Text: r.Text()}},
			IsError: r.IsError,
		}, nil
	})
	return srv
}
