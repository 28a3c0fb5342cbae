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

// longWidth is where a command's long description is wrapped before fang
// sees it: fang indents it by 2, and a paragraph wrapped once reads evenly
// (wrapping fang's 120-column lines again would leave a ragged edge).
const longWidth = HelpWidth - 4

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
	_, err := io.WriteString(h.w, fitHelpLine(line, HelpWidth)+"\n")
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
		_, err := io.WriteString(h.w, fitHelpLine(rest, HelpWidth))
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
	if h.col >= HelpWidth/2 {
		for _, r := range rows {
			if ansi.StringWidth(strings.TrimRight(ansi.Strip(r), " \t")) > HelpWidth {
				stacked = true
			}
		}
	}
	var b strings.Builder
	for _, r := range rows {
		if !stacked {
			b.WriteString(fitHelpLine(r, HelpWidth) + "\n")
			continue
		}
		key := strings.TrimRight(ansi.Strip(ansi.Truncate(r, h.col, "")), " ")
		indent := len(key) - len(strings.TrimLeft(key, " ")) + 4
		b.WriteString(fitHelpLine(ansi.Truncate(r, h.col, ""), HelpWidth) + "\n")
		b.WriteString(fitHelpLine(strings.Repeat(" ", indent)+ansi.TruncateLeft(r, h.col, ""), HelpWidth) + "\n")
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
	rows := strings.Split(ansi.Wrap(tail, width-indent, ""), "\n")
	pad := strings.Repeat(" ", indent)
	for i := range rows {
		rows[i] = strings.TrimRight(rows[i], " ")
		if i > 0 {
			rows[i] = pad + rows[i]
		}
	}
	return head + strings.Join(rows, "\n")
}

// wrapLongs wraps every command's long description at longWidth, each
// paragraph on its own, so fang (which only wraps past 120 columns) shows
// it as written.
func wrapLongs(root *cobra.Command) {
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
			paras[i] = ansi.Wordwrap(p, longWidth, "")
		}
		c.Long = strings.Join(paras, "\n")
	})
}
