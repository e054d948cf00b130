package analysis

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every committed claim that names its shipped file quotes it as shipped. A file not on
// this machine (its package not installed) is skipped unless adapters are required.
func TestCommittedQuotesAreInTheirFiles(t *testing.T) {
	all, err := ReadDir(filepath.Join("..", "..", "docs", "analyses", ClaimsDir))
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, c := range all {
		for _, cl := range c.Claims {
			if cl.File == "" {
				continue
			}
			named++
			one := *c
			one.Claims = []Claim{cl}
			err := one.CheckQuotes(context.Background())
			if errors.Is(err, ErrNotShipped) && os.Getenv("STOCKBENCH_REQUIRE_ADAPTERS") == "" {
				t.Logf("%s: skipped: %v", c.Library, err)
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", c.Library, err)
			}
		}
	}
	if named < 15 {
		t.Errorf("only %d committed claims name the file they quote", named)
	}
}

func TestCheckQuotes(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "lock.go")
	os.WriteFile(src, []byte("package lock\n\n// Obtain tries to obtain a new lock using a key with the given TTL.\n// May return ErrNotObtained if\n//   not successful.\nfunc Obtain() {}\n"), 0o644)
	md := filepath.Join(dir, "README.md")
	os.WriteFile(md, []byte("## Features\n* The **returned** `ctx` will be [canceled](https://example.com/ctx), for example:\n  * Redis are down.\n"), 0o644)
	tests := []struct {
		name, file, quote string
		want              string // a part of the error; "" for none
	}{
		{"across comment lines", src, "May return ErrNotObtained if not successful.", ""},
		{"across list items", md, "The returned `ctx` will be canceled, for example: Redis are down.", ""},
		{"a Markdown link and emphasis", md, "The returned `ctx` will be canceled", ""},
		{"a word changed", src, "May return ErrNotObtained when not successful.", "its quote is not in"},
		{"a file not installed", filepath.Join(dir, "missing.php"), "anything", ErrNotShipped.Error()},
		{"a module version that does not exist", "go:github.com/stockbench/no-such-module@v0.0.1/README.md", "anything", ErrNotShipped.Error()},
		{"not a path", "lock.go", "anything", "want an absolute path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Claims{Claims: []Claim{{ID: "x", Quote: tt.quote, File: tt.file}}}
			err := c.CheckQuotes(context.Background())
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("CheckQuotes: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("CheckQuotes = %v, want an error saying %q", err, tt.want)
			}
		})
	}
}
