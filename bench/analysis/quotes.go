package analysis

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// ErrNotShipped is a claim's file that is not on this machine: its package is not
// installed, or its Go module cannot be had.
var ErrNotShipped = errors.New("not on this machine")

// CheckQuotes checks that each claim of c naming the file it quotes (File) has its quote
// there, as the library ships it: comment markers, list bullets and line breaks aside.
// The first claim whose file does not hold its quote is an error naming both; a file not
// on this machine is one wrapping ErrNotShipped.
func (c *Claims) CheckQuotes(ctx context.Context) error {
	for _, cl := range c.Claims {
		if cl.File == "" {
			continue
		}
		path, err := shippedFile(ctx, cl.File)
		if err != nil {
			return fmt.Errorf("claim %s: %w", cl.ID, err)
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("claim %s: %s: %w", cl.ID, cl.File, errors.Join(ErrNotShipped, err))
		}
		if !strings.Contains(prose(string(text)), prose(cl.Quote)) {
			return fmt.Errorf("claim %s: its quote is not in %s (%s)", cl.ID, cl.File, path)
		}
	}
	return nil
}

// shippedFile is where file is on this machine: an absolute path as a Debian package
// installs it, or go:MODULE@VERSION/PATH, a file of a Go module at a version, from the
// module cache (downloaded into it when it is not there yet).
func shippedFile(ctx context.Context, file string) (string, error) {
	spec, ok := strings.CutPrefix(file, "go:")
	if !ok {
		if !filepath.IsAbs(file) {
			return "", fmt.Errorf("file %q: want an absolute path or go:MODULE@VERSION/PATH", file)
		}
		if _, err := os.Stat(file); err != nil {
			return "", fmt.Errorf("%s: %w", file, ErrNotShipped)
		}
		return file, nil
	}
	module, rest, ok := strings.Cut(spec, "@")
	version, rel, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || module == "" || version == "" || rel == "" {
		return "", fmt.Errorf("file %q: want go:MODULE@VERSION/PATH", file)
	}
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = os.TempDir() // outside any module
	out, err := cmd.Output()
	var got struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &got); err != nil || jerr != nil || got.Dir == "" {
		return "", fmt.Errorf("%s: go mod download %s@%s: %s: %w", file, module, version, strings.TrimSpace(got.Error+" "+errText(err)), ErrNotShipped)
	}
	return filepath.Join(got.Dir, filepath.FromSlash(rel)), nil
}

func errText(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(bytes.TrimSpace(exit.Stderr))
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// mdLink is a Markdown link, whose text is what a reader reads (and a quote quotes).
var mdLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// prose is text as a reader takes it: each line stripped of the comment markers and
// list bullets it begins with (Sphinx's "#:" too), the lines joined, every run of white
// space one space, a Markdown link its text, emphasis (*, **) gone.
func prose(text string) string {
	var words []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		for {
			trimmed := strings.TrimSpace(strings.TrimLeft(line, "#*/-:"))
			trimmed = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(trimmed, `"""`), "'''"))
			if trimmed == line {
				break
			}
			line = trimmed
		}
		words = append(words, strings.Fields(line)...)
	}
	return strings.ReplaceAll(mdLink.ReplaceAllString(strings.Join(words, " "), "$1"), "*", "")
}
