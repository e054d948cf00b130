package adapter

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/faults"
)

// majorMinor is "8.2" of "8.2.36": a stated tested-with version holds while the installed
// one keeps its major and minor (Debian's point releases move the rest).
func majorMinor(v string) string {
	parts := strings.SplitN(strings.TrimSpace(v), ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// sameVersions reads lines of "stated installed" versions, as a package's manifest
// (what) states them and this machine has them, and fails on each pair whose major and
// minor differ.
func sameVersions(t *testing.T, what string, lines []byte) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		said, have, _ := strings.Cut(line, " ")
		if majorMinor(said) != majorMinor(have) {
			t.Errorf("%s says it was tested with %s, this machine has %s: measure again and say so", what, said, have)
		}
	}
}

// TestPHPPackage reads adapters/php/composer.json as Composer would: its commands exist,
// run as programs (a shebang, executable), and the PHP and phpredis here meet what it
// requires and are the ones it states it was tested with. The command, run by its path
// as Composer's bin proxy runs it, earns what seed-setnx documents with no fault.
func TestPHPPackage(t *testing.T) {
	need(t, "PHP with phpredis (php-cli, php-redis)", php...)
	b, err := os.ReadFile("../../../adapters/php/composer.json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Name    string            `json:"name"`
		Require map[string]string `json:"require"`
		Bin     []string          `json:"bin"`
		Extra   struct {
			TestedWith map[string]string `json:"tested-with"`
		} `json:"extra"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("composer.json: %v", err)
	}
	if !strings.Contains(c.Name, "/") || len(c.Bin) == 0 {
		t.Fatalf("composer.json: want a vendor/name and its commands under bin, got %q %v", c.Name, c.Bin)
	}
	for _, bin := range c.Bin {
		p := filepath.Join("../../../adapters/php", bin)
		fi, err := os.Stat(p)
		if err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s: want an executable file (%v)", bin, err)
			continue
		}
		if head, _ := os.ReadFile(p); !strings.HasPrefix(string(head), "#!/usr/bin/env php\n") {
			t.Errorf("%s: want #!/usr/bin/env php on its first line", bin)
		}
	}
	out, err := exec.Command("php", "-r", `echo PHP_VERSION, " ", phpversion("redis");`).Output()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]string{}
	have["php"], have["ext-redis"], _ = strings.Cut(string(out), " ")
	// The frameworks as Debian installs them: Laravel says its version, Symfony's Lock
	// component only its package does.
	if v, err := exec.Command("php", "-r", `require "/usr/share/php/Illuminate/autoload.php"; echo Illuminate\Foundation\Application::VERSION;`).Output(); err == nil {
		have["laravel/framework"] = string(v)
	}
	if v, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", "php-symfony-lock").Output(); err == nil {
		have["symfony/lock"], _, _ = strings.Cut(string(v), "+")
	}
	for name, v := range have {
		if _, required := c.Require[name]; !required {
			if majorMinor(c.Extra.TestedWith[name]) != majorMinor(v) {
				t.Errorf("composer.json says it was tested with %s %s, this machine has %s: measure again and say so", name, c.Extra.TestedWith[name], v)
			}
			continue
		}
		if majorMinor(c.Extra.TestedWith[name]) != majorMinor(v) {
			t.Errorf("composer.json says it was tested with %s %s, this machine has %s: measure again and say so", name, c.Extra.TestedWith[name], v)
		}
		min, ok := strings.CutPrefix(c.Require[name], ">=")
		if !ok || !atLeast(v, min) {
			t.Errorf("composer.json requires %s %q, this machine has %s", name, c.Require[name], v)
		}
	}
	seed, _ := filepath.Abs("../../../adapters/php/seed-lock.php")
	earns(t, Lock(Config{Name: "php-seed-bin", Command: seed, Procs: testProcs}, false), "seed-setnx", faults.Kind(""))
}

// atLeast compares dotted versions number by number.
func atLeast(have, min string) bool {
	h, m := strings.Split(have, "."), strings.Split(min, ".")
	for i := range m {
		if i >= len(h) {
			return false
		}
		var a, b int
		for _, r := range h[i] {
			if r < '0' || r > '9' {
				break
			}
			a = a*10 + int(r-'0')
		}
		for _, r := range m[i] {
			b = b*10 + int(r-'0')
		}
		if a != b {
			return a > b
		}
	}
	return true
}

// TestRubyGem builds adapters/ruby as RubyGems would and checks that the Sidekiq and
// redis-rb here are the ones its gemspec states the verdicts were measured with; its
// command is what TestSidekiq runs.
func TestRubyGem(t *testing.T) {
	need(t, "Ruby with Debian's Sidekiq and redis-namespace (ruby-sidekiq, ruby-redis-namespace)", sidekiqLib...)
	pkg := filepath.Join(t.TempDir(), "ruby")
	if err := os.CopyFS(pkg, os.DirFS("../../../adapters/ruby")); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("gem", "build", "stockbench-adapters.gemspec")
	build.Dir = pkg
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("gem build: %v\n%s", err, out)
	}
	out, err := exec.Command("ruby", "-e", `
spec = Gem::Specification.load(ARGV[0])
require "sidekiq"
puts [spec.metadata["stockbench.tested-with.sidekiq"], Sidekiq::VERSION].join(" ")
puts [spec.metadata["stockbench.tested-with.redis"], Redis::VERSION].join(" ")
abort "no executable" unless spec.executables == ["stockbench-sidekiq-queue"]
`, filepath.Join(pkg, "stockbench-adapters.gemspec")).CombinedOutput()
	if err != nil {
		t.Fatalf("reading the gemspec: %v\n%s", err, out)
	}
	sameVersions(t, "the gemspec", out)
}
