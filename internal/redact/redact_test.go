package redact

import (
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		// A URL that parses.
		{"redis://user:hunter2pw@h:6379/0", "redis://user:xxxxx@h:6379/0"},
		// One that does not: the port is not a number.
		{"redis://:hunter3pw@host:notaport", "redis://:xxxxx@host:notaport"},
		// A password with an unescaped slash and @: hidden whole.
		{"rediss://u:pa/ss@wd@h:1?addr=x:2", "rediss://u:xxxxx@h:1?addr=x:2"},
		// No password: unchanged.
		{"redis://h:6379", "redis://h:6379"},
	}
	for _, tt := range tests {
		if got := URL(tt.in); got != tt.want {
			t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestStringHidesSeenSecrets: once a URL was seen, its password is hidden from any text,
// inside a URL or not, as written or percent-decoded.
func TestStringHidesSeenSecrets(t *testing.T) {
	URL("redis://:s3cr%40t-word@h:1")
	for _, in := range []string{
		`parse "redis://:s3cr%40t-word@h:1": invalid port`,
		`redis: invalid database number: "s3cr@t-word"`,
		`unexpected argument "s3cr@t-word"`,
	} {
		if got := String(in); strings.Contains(got, "s3cr") {
			t.Errorf("String(%q) = %q: the password is still there", in, got)
		}
	}
	if got := String("a short pw: ab"); got != "a short pw: ab" {
		t.Errorf("text without a secret changed: %q", got)
	}
}
