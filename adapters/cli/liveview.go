package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Terminal size assumed when the terminal does not say.
const (
	defaultCols = 80
	defaultRows = 24
)

// liveArea is the block of rows at the bottom of a terminal that a
// command redraws in place (the hosts of an enrollment), with everything
// else — log lines, warnings — printed above it.
//
// It never lets the terminal wrap a row: a wrapped row takes two lines
// while the redraw moves the cursor up by one per row, which leaves stale
// copies behind. Every row is cut to one column less than the terminal's
// width (with an ellipsis), and the area never takes more rows than the
// terminal has, since the cursor cannot move up into the scrollback.
// The width is re-measured when the terminal says it changed (SIGWINCH).
type liveArea struct {
	mu   sync.Mutex
	out  io.Writer
	size func() (cols, rows int)
	cols int
	rows int
	// drawn are the rows on screen, as written (cut to drawnCols).
	drawn []string
	// lines is how many terminal lines the drawn rows take now.
	lines int
}

func newLiveArea(out io.Writer, size func() (int, int)) *liveArea {
	l := &liveArea{out: out, size: size}
	l.measure()
	return l
}

// measure reads the terminal's size.
func (l *liveArea) measure() {
	cols, rows := 0, 0
	if l.size != nil {
		cols, rows = l.size()
	}
	if cols <= 0 {
		cols = defaultCols
	}
	if rows <= 0 {
		rows = defaultRows
	}
	l.cols, l.rows = cols, rows
}

// resized re-measures the terminal (on SIGWINCH).
func (l *liveArea) resized() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.remeasure()
}

// remeasure reads the terminal's size again. Terminals that reflow on a
// resize (tmux, VTE, iTerm2, kitty) rewrap the rows already drawn at the
// new width, so after a shrink the area takes more lines than it has rows:
// the next erase moves up by that many. Every redraw re-measures too, as
// the terminal reflows at once and SIGWINCH arrives a moment later: a
// redraw in between would otherwise leave the rewrapped rows behind.
func (l *liveArea) remeasure() {
	cols := l.cols
	l.measure()
	if l.cols == cols {
		return
	}
	lines := 0
	for _, r := range l.drawn {
		lines += max(1, (width(r)+l.cols-1)/l.cols)
	}
	l.lines = lines
}

// height is how many rows the area may take: the terminal's, less one so
// the cursor's line below the area never scrolls the top row away.
func (l *liveArea) height() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return max(1, l.rows-1)
}

// draw replaces the area's rows.
func (l *liveArea) draw(rows []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.remeasure()
	var b strings.Builder
	l.erase(&b)
	l.write(&b, rows)
	io.WriteString(l.out, b.String())
}

// above writes p (whole lines) above the area: the area is erased, p
// written to w and the area drawn again under it. w is the terminal too
// (standard error beside standard output), or a file.
func (l *liveArea) above(w io.Writer, p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.remeasure()
	rows := l.drawn
	var b strings.Builder
	l.erase(&b)
	io.WriteString(l.out, b.String())
	n, err := w.Write(p)
	b.Reset()
	l.write(&b, rows)
	io.WriteString(l.out, b.String())
	return n, err
}

// close erases the area: what replaces it (a summary) is printed where it was.
func (l *liveArea) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.remeasure()
	var b strings.Builder
	l.erase(&b)
	l.drawn = nil
	io.WriteString(l.out, b.String())
}

// erase clears the area's lines one by one and leaves the cursor on its
// first line. Not "clear to the end of the screen": from the screen's
// top-left corner tmux takes that for a cleared screen and keeps a copy in
// its scrollback (scroll-on-clear), a stale copy of the area per redraw.
func (l *liveArea) erase(b *strings.Builder) {
	if l.lines > 0 {
		fmt.Fprintf(b, "\x1b[%dA", l.lines)
		for range l.lines {
			// Clear the line and move down; the cursor's line below the
			// area exists, so this never scrolls.
			b.WriteString("\x1b[2K\x1b[1B")
		}
		fmt.Fprintf(b, "\x1b[%dA", l.lines)
	}
	b.WriteString("\r")
	l.lines = 0
}

// write draws rows, each cut to fit, at most height of them.
func (l *liveArea) write(b *strings.Builder, rows []string) {
	if h := max(1, l.rows-1); len(rows) > h {
		rows = rows[len(rows)-h:]
	}
	l.drawn = l.drawn[:0]
	for _, r := range rows {
		r = cut(r, l.cols-1)
		l.drawn = append(l.drawn, r)
		b.WriteString(r)
		b.WriteString("\n")
	}
	l.lines = len(rows)
}

// cut shortens s to at most n columns, ending it with an ellipsis when
// something was cut. Control characters become spaces: a row is one line.
func cut(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if n <= 0 {
		return ""
	}
	if width(s) <= n {
		return s
	}
	var b strings.Builder
	w := 0
	for _, r := range s {
		rw := runeWidth(r)
		if w+rw > n-1 {
			break
		}
		b.WriteRune(r)
		w += rw
	}
	b.WriteString("…")
	return b.String()
}

// width is the number of terminal columns s takes.
func width(s string) int {
	w := 0
	for _, r := range s {
		w += runeWidth(r)
	}
	return w
}

// runeWidth is the columns one rune takes: 0 for combining marks, 2 for
// the wide East Asian ranges and emoji, 1 otherwise. Names and messages
// are ASCII in practice; this keeps a stray wide character from wrapping
// a row.
func runeWidth(r rune) int {
	switch {
	case r == utf8.RuneError:
		return 1
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == 0x200B:
		return 0
	case r >= 0x1100 && r <= 0x115F, r >= 0x2E80 && r <= 0xA4CF, r >= 0xAC00 && r <= 0xD7A3,
		r >= 0xF900 && r <= 0xFAFF, r >= 0xFE30 && r <= 0xFE4F, r >= 0xFF00 && r <= 0xFF60,
		r >= 0xFFE0 && r <= 0xFFE6, r >= 0x1F300 && r <= 0x1FAFF, r >= 0x20000 && r <= 0x3FFFD:
		return 2
	}
	return 1
}

// fmtDuration renders a duration as a person reads it: milliseconds under
// a second, whole seconds under a minute, then minutes and seconds, then
// hours and minutes.
func fmtDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if ms := d.Round(time.Millisecond); ms < time.Second {
		return fmt.Sprintf("%dms", ms/time.Millisecond)
	}
	if s := d.Round(time.Second); s < time.Minute {
		return fmt.Sprintf("%ds", s/time.Second)
	}
	if s := d.Round(time.Second); s < time.Hour {
		m, sec := s/time.Minute, (s%time.Minute)/time.Second
		if sec == 0 {
			return fmt.Sprintf("%dm", m)
		}
		return fmt.Sprintf("%dm %ds", m, sec)
	}
	d = d.Round(time.Minute)
	h, m := d/time.Hour, (d%time.Hour)/time.Minute
	if m == 0 {
		return fmt.Sprintf("%dh", h)
	}
	return fmt.Sprintf("%dh %dm", h, m)
}
