// Command vigil is a person's terminal console for what AI agents do on their behalf.
package main

import (
	"context"
	"os"

	"github.com/vigil-dev/vigil/cli"
)

func main() {
	os.Exit(cli.Execute(context.Background(), os.Args[1:]))
}
