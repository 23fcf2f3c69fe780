// Package pool reads and writes credential pool files: plain text, one
// credential per line, with "#" lines as metadata. The first metadata line
// written by mintpool looks like
//
//	# idpbench-pool kind=refresh_token product=hydra minted=2026-11-30T10:00:00Z expires=...
//
// Pool files hold secrets: they are created with mode 0600.
package pool

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/idpbench/idpbench/internal/atomicfile"
)

// Mode is the file mode of every pool file.
const Mode os.FileMode = 0o600

// HeaderTag starts the metadata line mintpool writes.
const HeaderTag = "# idpbench-pool"

// Pool is a parsed pool file.
type Pool struct {
	Name   string            // file name as given, for errors ("-" for stdin)
	Header map[string]string // key=value pairs of the idpbench-pool line
	Creds  []string          // credentials in file order
	Lines  []int             // Lines[i] is the 1-based line of Creds[i] in the file
}

// Line is the file line of credential i, for errors.
func (p *Pool) Line(i int) int {
	if i < len(p.Lines) {
		return p.Lines[i]
	}
	return i + 1
}

// maxLine bounds one credential; real tokens are a few KB at most.
const maxLine = 1 << 20

// Read parses a pool. Errors name the pool and the line.
func Read(r io.Reader, name string) (*Pool, error) {
	p := &Pool{Name: name, Header: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxLine)
	n := 1
	for ; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case strings.HasPrefix(line, HeaderTag):
			if err := parseHeader(p.Header, line[len(HeaderTag):]); err != nil {
				return nil, fmt.Errorf("pool %s line %d: %w", name, n, err)
			}
		case strings.HasPrefix(line, "#"), strings.TrimSpace(line) == "":
		case strings.ContainsAny(line, " \t"):
			return nil, fmt.Errorf("pool %s line %d: a credential must not contain white space", name, n)
		default:
			p.Creds, p.Lines = append(p.Creds, line), append(p.Lines, n)
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("pool %s line %d: longer than %d bytes (a credential is a few KB at most)", name, n, maxLine)
	} else if err != nil {
		return nil, fmt.Errorf("reading pool %s: %w", name, err)
	}
	if len(p.Creds) == 0 {
		return nil, fmt.Errorf("pool %s: no credentials (empty pool)", name)
	}
	return p, nil
}

// ReadFile reads a pool from a path, or from stdin when path is "-".
func ReadFile(path string, stdin io.Reader) (*Pool, error) {
	if path == "-" {
		return Read(stdin, "-")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading pool: %w", err)
	}
	defer f.Close()
	return Read(f, path)
}

func parseHeader(h map[string]string, rest string) error {
	for _, kv := range strings.Fields(rest) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("malformed header field %q (want key=value)", kv)
		}
		h[k] = v
	}
	return nil
}

// FormatHeader renders the metadata line, keys sorted except "kind" first.
func FormatHeader(h map[string]string) string {
	keys := make([]string, 0, len(h))
	for k := range h {
		if k != "kind" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(HeaderTag)
	if v, ok := h["kind"]; ok {
		fmt.Fprintf(&b, " kind=%s", v)
	}
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%s", k, strings.ReplaceAll(h[k], " ", "_"))
	}
	return b.String()
}

// WriteFile writes a pool atomically with mode 0600 ("-" writes to stdout).
func WriteFile(path string, header map[string]string, creds []string, stdout io.Writer) error {
	f, err := atomicfile.Create(path, Mode, stdout)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, FormatHeader(header))
	for _, c := range creds {
		w.WriteString(c)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Abort()
		return fmt.Errorf("writing pool %s: %w", path, err)
	}
	return f.Commit()
}
