package results

import (
	"cmp"
	"slices"
	"strconv"
)

// Sale is one sale as a value: the design and where it comes from, the preset, every
// setting spelled out (the preset's too), the fault plan and the seed, and where Redis
// came from. The record keeps it with the run; replay, shrink and the explorer build
// and change it; the command line printed under a verdict is rendered from it (Args),
// and a command reads that line back into the same sale.
type Sale struct {
	Kind     SaleKind `json:"kind"`
	Scenario string   `json:"scenario"`
	Design   string   `json:"design"`
	// Source is where a design that is not built in comes from; nil for a built-in one.
	Source *DesignSource `json:"source,omitempty"`
	// Faults is the fault plan in its written form (faults.Parse reads it).
	Faults string `json:"faults"`
	// Settings are the sale's settings by their flags' names ("buyers", "think", "seed"),
	// in the order the command line gives them.
	Settings []Setting `json:"settings"`
	// Redis is where Redis came from, as flags: none for the harness's default; a URL's
	// password is masked.
	Redis []string `json:"redis,omitempty"`
}

// Setting is one setting of a sale: the flag's name without its dashes, and its value.
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// DesignSource is where a design not built into stockbench comes from: a design file,
// or a process adapter's command (with its pool and its lock servers).
type DesignSource struct {
	// File is a design file's path (--lock-file, --queue-file).
	File string `json:"file,omitempty"`
	// Exec is an adapter's command, and Part what it runs: lock, buy or queue.
	Exec string `json:"exec,omitempty"`
	// Go is the Go library an adapter was built against (--lock-go's or --queue-go's spec, as
	// MODULE@VERSION ARGS): a rerun builds it again rather than run Exec, a path in the
	// cache of the machine that ran it.
	Go    string `json:"go,omitempty"`
	Part  string `json:"part,omitempty"`
	Procs int    `json:"procs,omitempty"`
	Nodes int    `json:"nodes,omitempty"`
}

// Get is setting name's value, "" when the sale does not have it.
func (s *Sale) Get(name string) string {
	if i := s.index(name); i >= 0 {
		return s.Settings[i].Value
	}
	return ""
}

// Set sets setting name to v, adding it last when the sale did not have it.
func (s *Sale) Set(name, v string) {
	if i := s.index(name); i >= 0 {
		s.Settings[i].Value = v
		return
	}
	s.Settings = append(s.Settings, Setting{name, v})
}

func (s *Sale) index(name string) int {
	return slices.IndexFunc(s.Settings, func(x Setting) bool { return x.Name == name })
}

// External reports whether the sale ran on the user's own Redis (--redis-url, or
// --redis external), where its keys carry a lease and nothing is started beside it.
func (s *Sale) External() bool {
	for i, a := range s.Redis {
		if a == "--redis-url" || a == "--redis" && i+1 < len(s.Redis) && s.Redis[i+1] == "external" {
			return true
		}
	}
	return false
}

// Seed is the sale's seed: its think-time draws, its faults' victims and rates.
func (s *Sale) Seed() uint64 {
	n, _ := strconv.ParseUint(s.Get("seed"), 10, 64)
	return n
}

// Clone is a copy of s that changes apart from it.
func (s Sale) Clone() Sale {
	s.Settings = slices.Clone(s.Settings)
	s.Redis = slices.Clone(s.Redis)
	if s.Source != nil {
		src := *s.Source
		s.Source = &src
	}
	return s
}

// Args is the command line, after "stockbench", that runs the sale alone as it ran.
func (s *Sale) Args() []string {
	design := "--lock"
	if s.Kind == QueueSale {
		design = "--queue"
	}
	args := []string{"run", "--scenario", s.Scenario, design, s.Design}
	args = append(args, s.Source.Flags(s.Kind, s.Design)...)
	args = append(args, "--fault", s.Faults)
	for _, x := range s.Settings {
		if x.Value == "true" { // a switch: given or not
			args = append(args, "--"+x.Name)
			continue
		}
		args = append(args, "--"+x.Name, x.Value)
	}
	return append(args, s.Redis...)
}

// Flags are the flags that bring the design named name, of a sale of kind, into a
// command: none for a built-in design (d nil).
func (d *DesignSource) Flags(kind SaleKind, name string) []string {
	switch {
	case d == nil:
		return nil
	case d.File != "" && kind == QueueSale:
		return []string{"--queue-file", d.File}
	case d.File != "":
		return []string{"--lock-file", d.File}
	case d.Exec == "" && d.Go == "":
		return nil
	}
	args := []string{"--" + d.Part + "-exec", name + "=" + d.Exec}
	if d.Go != "" {
		args = []string{"--" + cmp.Or(d.Part, "lock") + "-go", name + "=" + d.Go}
	}
	if d.Procs > 0 {
		args = append(args, "--adapter-procs", strconv.Itoa(d.Procs))
	}
	if d.Nodes > 1 {
		args = append(args, "--adapter-nodes", strconv.Itoa(d.Nodes))
	}
	return args
}
