package cli

import "github.com/spf13/cobra"

// commands lists every subcommand; each lives in its own file.
func commands(app *App) []*cobra.Command {
	return []*cobra.Command{
		newConfigCmd(app),
		newAuditCmd(app),
		newDemoCmd(app),
		newVersionCmd(app),
		newSearchCmd(app),
		newMemoryCmd(app),
		newMcpCmd(app),
		newKeysCmd(app),
		newLeaseCmd(app),
		newSubmitCmd(app),
		newPendingCmd(app),
		newPreviewCmd(app),
		newApproveCmd(app),
		newDenyCmd(app),
		newResultCmd(app),
		newServeCmd(app),
	}
}
