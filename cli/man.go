package cli

import (
	"fmt"
	"regexp"

	"github.com/muesli/mango"
	"github.com/muesli/roff"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// newManCmd is `vigil man`: the man page, written to stdout. It replaces
// fang's, which lists a flag as "--y --yes" and prints the backticks
// that name a flag's value ("`HASH`") as they are.
func newManCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:                   "man",
		Short:                 "Print the man page (roff): vigil man > vigil.1",
		Hidden:                true,
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(app.Out, manPageOf(cmd.Root()))
			return err
		},
	}
}

// codeSpan is a `literal` in help text: bold in the man page.
var codeSpan = regexp.MustCompile("`([^`\n]+)`")

// manPageOf builds root's man page (section 1): each command with its
// usage, summary and flags ("-y, --yes", "--expect-preview HASH").
func manPageOf(root *cobra.Command) string {
	page := mango.NewManPage(1, root.Name(), root.Short).WithLongDescription(longOf(root))
	addManCommand(&page.Root, root)
	out := page.Build(roff.NewDocument())
	return codeSpan.ReplaceAllString(out, `\fB$1\fP`)
}

func addManCommand(item *mango.Command, c *cobra.Command) {
	for _, sub := range c.Commands() {
		if sub.Hidden || sub.Name() == "help" {
			continue
		}
		child := mango.NewCommand(sub.Name(), sub.Short, sub.Use)
		_ = item.AddCommand(child) // names are unique among siblings
		addManCommand(child, sub)
	}
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		_ = item.AddFlag(manFlag(f)) // a flag is listed once
	}
	c.NonInheritedFlags().VisitAll(visit)
}

// manFlag is how a flag is listed: mango writes "-" + Name when PFlag is
// false, "--" + Name when true, so the shorthand form carries the rest of
// the spelling in Name. The value's name (the backquoted word of the
// usage, or its type) follows the flag, and the usage is shown without
// the backquotes.
func manFlag(f *pflag.Flag) mango.Flag {
	name, usage := pflag.UnquoteUsage(f)
	spelled := f.Name
	if name != "" {
		spelled += " " + name
	}
	if f.Shorthand != "" {
		return mango.Flag{Name: f.Shorthand + ", --" + spelled, Usage: usage}
	}
	return mango.Flag{Name: spelled, Usage: usage, PFlag: true}
}

// longOf is a command's long description as written (wrapLongs wraps it
// for help; roff fills paragraphs itself and would start one per line).
func longOf(c *cobra.Command) string {
	if s, ok := c.Annotations[annotationLong]; ok {
		return s
	}
	return c.Long
}

// annotationLong keeps a command's long description before wrapLongs.
const annotationLong = "vigil:long"
