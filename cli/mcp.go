package cli

import (
	"errors"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/exec/memory"
)

// newMcpCmd is `vigil mcp`: an MCP server on stdio exposing search_memory.
func newMcpCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve the search_memory tool to MCP clients over stdio",
		Long: "Speaks MCP (newline-delimited JSON-RPC) on stdin/stdout until stdin closes.\n" +
			"Logs go to stderr; queries appear there cut to their first 50 characters.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// stdout belongs to the protocol: every log line goes to stderr,
			// often a person's terminal, and holds what clients sent (query
			// previews): the lines stay exact JSON with nothing raw a terminal
			// acts on or a person cannot see.
			log := slog.New(slog.NewJSONHandler(safeJSONWriter{app.Err}, &slog.HandlerOptions{Level: slog.LevelInfo}))
			var core memory.Searcher
			s, err := openMemory(app)
			if err != nil {
				var ee *ExitError
				if errors.As(err, &ee) {
					return err
				}
				// Serve anyway: each call answers with the seed's Processing error.
				log.Error("memory_open_failed", "error", err.Error())
				core = memory.Unavailable(err)
			} else {
				defer s.Close()
				core = s
			}
			srv := memory.NewMCPServer(memory.NewTool(core, log), Version)
			t := &mcp.IOTransport{Reader: io.NopCloser(app.In), Writer: nopWriteCloser{app.Out}}
			if err := srv.Run(cmd.Context(), t); err != nil && !errors.Is(err, io.EOF) &&
				cmd.Context().Err() == nil {
				return Fail(ExitExecution, err)
			}
			return nil
		},
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// safeJSONWriter passes JSON text through terminalSafeJSON: slog's JSON
// handler escapes C0 controls but not DEL, C1 or format characters.
type safeJSONWriter struct{ w io.Writer }

func (s safeJSONWriter) Write(p []byte) (int, error) {
	if _, err := s.w.Write(terminalSafeJSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
