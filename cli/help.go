package cli

import (
	"bytes"
	"io"
	"regexp"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
)

// HelpWidth is the most columns a line of `--help` takes. fang renders
// help up to 120 columns and pads its paragraphs with spaces to that
// width, and has no option to change either; Vigil's help is cut to fit
// a 100-column terminal, without trailing spaces.
const HelpWidth = 100

// helpWidthOf is the width help is fitted to on out: HelpWidth, or a
// narrower terminal's width (fang wraps at the terminal's width too, and
// 20 columns is the least anything is wrapped to).
func helpWidthOf(out io.Writer) int {
	if f, ok := out.(term.File); ok {
		if w, _, err := term.GetSize(f.Fd()); err == nil && w > 0 {
			return max(20, min(w, HelpWidth))
		}
	}
	return HelpWidth
}

// helpWriter is the root command's output, where cobra and fang write help.
// Until a command runs, each line is trimmed of trailing spaces and wrapped
// at HelpWidth. The rows of a two-column table (flags, commands) are held
// until the table ends so they can be laid out alike: wrapped under their
// description column, or, when the key column alone takes half the width,
// each description on the lines below its key. A command that runs
// (completion scripts, `__complete`'s candidates) writes through
// unchanged: raw is set in the root's PersistentPreRunE, which help never
// reaches.
type helpWriter struct {
	w     io.Writer
	width int // columns: helpWidthOf(w)
	raw   bool
	buf   []byte
	table []string // rows of the table being read
	col   int      // its description column
}

func (h *helpWriter) Write(p []byte) (int, error) {
	if h.raw {
		if err := h.flush(); err != nil {
			return 0, err
		}
		return h.w.Write(p)
	}
	h.buf = append(h.buf, p...)
	for {
		i := bytes.IndexByte(h.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(h.buf[:i])
		h.buf = h.buf[i+1:]
		if err := h.line(line); err != nil {
			return 0, err
		}
	}
}

// line takes one line of help: a table row is held, anything else ends
// the table and is written fitted.
func (h *helpWriter) line(line string) error {
	text := strings.TrimRight(ansi.Strip(line), " \t")
	if m := flagRow.FindStringSubmatch(text); m != nil {
		col := ansi.StringWidth(m[1])
		if len(h.table) > 0 && col != h.col {
			if err := h.flushTable(); err != nil {
				return err
			}
		}
		h.table, h.col = append(h.table, line), col
		return nil
	}
	if err := h.flushTable(); err != nil {
		return err
	}
	_, err := io.WriteString(h.w, fitHelpLine(line, h.width)+"\n")
	return err
}

// flush writes what is held: the table being read and a last partial line.
func (h *helpWriter) flush() error {
	if err := h.flushTable(); err != nil {
		return err
	}
	if len(h.buf) > 0 {
		rest := string(h.buf)
		h.buf = nil
		_, err := io.WriteString(h.w, fitHelpLine(rest, h.width))
		return err
	}
	return nil
}

// flushTable writes the held rows: as they are when all fit, wrapped under
// the description column when it leaves room, else each key on its own
// line with its description below, indented.
func (h *helpWriter) flushTable() error {
	rows := h.table
	h.table = nil
	stacked := false
	if h.col >= h.width/2 {
		for _, r := range rows {
			if ansi.StringWidth(strings.TrimRight(ansi.Strip(r), " \t")) > h.width {
				stacked = true
			}
		}
	}
	var b strings.Builder
	for _, r := range rows {
		if !stacked {
			b.WriteString(fitHelpLine(r, h.width) + "\n")
			continue
		}
		key := strings.TrimRight(ansi.Strip(ansi.Truncate(r, h.col, "")), " ")
		indent := len(key) - len(strings.TrimLeft(key, " ")) + 4
		b.WriteString(fitHelpLine(ansi.Truncate(r, h.col, ""), h.width) + "\n")
		b.WriteString(fitHelpLine(strings.Repeat(" ", indent)+ansi.TruncateLeft(r, h.col, ""), h.width) + "\n")
	}
	_, err := io.WriteString(h.w, b.String())
	return err
}

// Fd lets fang's colour detection see the terminal behind the writer (it
// asks for a term.File); a writer that is no file answers an invalid fd.
func (h *helpWriter) Fd() uintptr {
	if f, ok := h.w.(term.File); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// Read and Close complete term.File; help only writes.
func (h *helpWriter) Read([]byte) (int, error) { return 0, io.EOF }

// Close completes term.File; the stream is not the writer's to close.
func (h *helpWriter) Close() error { return nil }

// flagRow finds a row of two columns: an indented key, two or more spaces,
// then its description (where a wrapped row's next lines start).
var flagRow = regexp.MustCompile(`^(\s+\S+(?: \S+)*\s{2,})\S`)

// fitHelpLine trims a line's trailing spaces and wraps it at width
// columns; escape sequences (colours) are kept and not counted.
func fitHelpLine(line string, width int) string {
	plain := ansi.Strip(line)
	text := strings.TrimRight(plain, " \t")
	if len(text) < len(plain) {
		line = ansi.Truncate(line, ansi.StringWidth(text), "")
		if strings.Contains(line, "\x1b[") {
			line += "\x1b[m" // what was cut may have held the reset
		}
	}
	if ansi.StringWidth(text) <= width {
		return line
	}
	indent := len(text) - len(strings.TrimLeft(text, " "))
	if m := flagRow.FindStringSubmatch(text); m != nil && ansi.StringWidth(m[1]) < width/2 {
		indent = ansi.StringWidth(m[1])
	}
	head, tail := ansi.Truncate(line, indent, ""), ansi.TruncateLeft(line, indent, "")
	rows := strings.Split(keepHyphens(tail, func(s string) string { return ansi.Wrap(s, width-indent, "") }), "\n")
	pad := strings.Repeat(" ", indent)
	for i := range rows {
		rows[i] = strings.TrimRight(rows[i], " ")
		if i > 0 {
			rows[i] = pad + rows[i]
		}
	}
	return head + strings.Join(rows, "\n")
}

// wrapLongs wraps every command's long description 4 columns inside
// width, each paragraph on its own, before fang sees it: fang indents it
// by 2 and only wraps past the terminal's width (120 at most), and a
// paragraph wrapped once reads evenly where wrapping fang's lines again
// would leave a ragged edge.
func wrapLongs(root *cobra.Command, width int) {
	walk(root, func(c *cobra.Command) {
		if c.Long == "" {
			return
		}
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[annotationLong] = c.Long
		paras := strings.Split(c.Long, "\n")
		for i, p := range paras {
			paras[i] = keepHyphens(p, func(s string) string { return ansi.Wordwrap(s, width-4, "") })
		}
		c.Long = strings.Join(paras, "\n")
	})
}

// keepHyphens runs wrap on s with its hyphens held: ansi's wrapping always
// breaks after a hyphen, which cut "--expect-preview" in two.
func keepHyphens(s string, wrap func(string) string) string {
	const held = "\u2011" // non-breaking hyphen, one cell like "-"
	return strings.ReplaceAll(wrap(strings.ReplaceAll(s, "-", held)), held, "-")
}
