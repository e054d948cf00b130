// Package redact keeps passwords out of what stockbench prints and writes: the password
// of a Redis URL is hidden wherever such a URL appears, parsable or not, and a password
// once seen is hidden from every later text as well.
package redact

import (
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// Mask is what a hidden password reads as.
const Mask = "xxxxx"

// minSecret is the shortest password hidden wherever it appears, not only inside a URL:
// hiding every "a" of a message would leave nothing to read.
const minSecret = 4

// userinfo matches the password of scheme://user:password@ in any text. A password is
// anything up to the last @ before white space, so one with an unescaped / or : is
// hidden whole.
var userinfo = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]*:)[^\s]*@`)

var secrets struct {
	mu   sync.RWMutex
	list []string
}

// Secret hides s from every text String is given from now on.
func Secret(s string) {
	if len(s) < minSecret {
		return
	}
	secrets.mu.Lock()
	defer secrets.mu.Unlock()
	for _, v := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
		if !contains(secrets.list, v) {
			secrets.list = append(secrets.list, v)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// URL returns u with its password masked, whether or not u parses, and hides the
// password (as written and as decoded) from every later text.
func URL(u string) string {
	if m := userinfo.FindStringSubmatch(u); m != nil {
		raw := strings.TrimSuffix(strings.TrimPrefix(m[0], m[1]), "@")
		Secret(raw)
		if dec, err := url.PathUnescape(raw); err == nil {
			Secret(dec)
		}
	}
	if p, err := url.Parse(u); err == nil && p.User != nil {
		if pw, ok := p.User.Password(); ok {
			Secret(pw)
		}
	}
	return String(u)
}

// String returns s with every password it holds masked: those inside URLs, and those
// seen before by Secret or URL.
func String(s string) string {
	s = userinfo.ReplaceAllString(s, "${1}"+Mask+"@")
	secrets.mu.RLock()
	defer secrets.mu.RUnlock()
	for _, v := range secrets.list {
		s = strings.ReplaceAll(s, v, Mask)
	}
	return s
}

// Strings masks every element of ss in place and returns it.
func Strings(ss []string) []string {
	for i := range ss {
		ss[i] = String(ss[i])
	}
	return ss
}
