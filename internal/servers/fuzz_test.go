package servers

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzRedisURL: any --redis-url is options or one error, never a panic, and the
// password it holds reaches neither the masked URL nor the error.
func FuzzRedisURL(f *testing.F) {
	for _, s := range []string{"redis://127.0.0.1:6379", "redis://:hunter22@host:notaport", "rediss://u:p4ss@h:1/3?dial_timeout=1s",
		"redis://:pw%40rd@h:1?addr=h:2", "unix:///tmp/r.sock", "redis://[::1]:6379", "http://:secret99@h:1", "redis://h:1/x", "://"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, u string, cluster bool) {
		o, err := External{URL: u, Cluster: cluster}.options()
		if err == nil && len(o.Addrs) == 0 {
			t.Fatalf("%q: options without an address", u)
		}
		masked := RedactURL(u)
		p, perr := url.Parse(u)
		if perr != nil || p.User == nil {
			return
		}
		pw, ok := p.User.Password()
		if !ok || len(pw) < 4 {
			return
		}
		if strings.Contains(masked, pw) {
			t.Fatalf("RedactURL(%q) = %q holds the password", u, masked)
		}
		if err != nil && strings.Contains(redactErr(err), pw) {
			t.Fatalf("the error of %q holds the password: %v", u, redactErr(err))
		}
	})
}
