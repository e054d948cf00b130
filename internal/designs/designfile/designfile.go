// Package designfile reads lock and queue designs written as Lua scripts: a JSON file
// names each script (inline, or as a file beside it) and what fills its KEYS and ARGV,
// and becomes a lockimpl.Impl or a queueimpl.Impl that runs like a built-in design.
//
// JSON because the standard library decodes it strictly (an unknown field is an error),
// every CI system can write it, and the scripts themselves, the part worth reading, can
// live in .lua files of their own.
package designfile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/queueimpl"
)

// file is a design file as written.
type file struct {
	// Name is what --lock and --queue call the design.
	Name    string `json:"name"`
	Summary string `json:"summary"`
	// Lock holds a lock design's scripts by role; Queue a queue design's.
	Lock  map[string]scriptFile `json:"lock"`
	Queue map[string]scriptFile `json:"queue"`
	// Guarantee and Ordered describe a queue design, as queueimpl.Impl's fields do.
	Guarantee string `json:"guarantee"`
	Ordered   bool   `json:"ordered"`
	// Documented is what the design documents it earns (see classesByFault): a run says
	// whether each sale earned it, as for a built-in design.
	Documented json.RawMessage `json:"documented"`
	// LeaseKeys names a queue's keys that record who holds a task until when, which
	// evict-lease evicts (of queue, processing, taken, lock). Default: none, and
	// evict-lease does not strike the design.
	LeaseKeys []string `json:"lease_keys"`
}

// scriptFile is one script as written: its source inline (lua) or in a file (file, a
// path relative to the design file), and the names of what fills KEYS and ARGV.
type scriptFile struct {
	Lua  string   `json:"lua"`
	File string   `json:"file"`
	Keys []string `json:"keys"`
	Args []string `json:"args"`
}

// Design is a design read from a file: a lock (Lock set) or a queue (Queue set).
type Design struct {
	// Path is the file it was read from.
	Path    string
	Lock    *lockimpl.Impl
	Queue   *queueimpl.Impl
	scripts []*Script
}

// Name is the design's name.
func (d Design) Name() string {
	if d.Lock != nil {
		return d.Lock.Name
	}
	return d.Queue.Name
}

// Check has the server compile every script of d, by loading it into its script cache
// (no key is touched): a script Redis rejects is an error naming the file and the script.
func (d Design) Check(ctx context.Context, c redis.Scripter) error {
	for _, s := range d.scripts {
		if err := s.load(ctx, c); err != nil {
			return fmt.Errorf("%s: %w", d.Path, err)
		}
	}
	return nil
}

// Read reads the design in path. Its errors name the file, and the field where one is
// wrong.
func Read(path string) (Design, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Design{}, fmt.Errorf("design file: %w", err)
	}
	d, err := decode(path, b)
	if err != nil {
		return Design{}, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

func decode(path string, b []byte) (Design, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		return Design{}, JSONError(b, err)
	}
	if dec.More() {
		return Design{}, errors.New("more than one JSON value")
	}
	switch {
	case f.Name == "":
		return Design{}, errors.New("name: missing")
	case strings.ContainsAny(f.Name, ", /\t"):
		return Design{}, fmt.Errorf("name: %q has a comma, a slash or a space, which lists of designs cannot hold", f.Name)
	case (f.Lock == nil) == (f.Queue == nil):
		return Design{}, errors.New(`a design has exactly one of "lock" (acquire, release, renew) and "queue" (enqueue, dequeue, ack, reap, len)`)
	case f.Lock != nil && f.LeaseKeys != nil:
		return Design{}, errors.New(`lease_keys: a queue's, not a lock's`)
	case f.Lock != nil && (f.Guarantee != "" || f.Ordered):
		return Design{}, errors.New(`guarantee, ordered: a queue's, not a lock's`)
	}
	d := Design{Path: path}
	summary := f.Summary
	if summary == "" {
		summary = "Lua scripts from " + path
	}
	if f.Lock != nil {
		s, err := d.scriptsOf(path, "lock", f.Lock, lockRoles)
		if err != nil {
			return Design{}, err
		}
		documented, err := lockVerdicts(f.Documented)
		if err != nil {
			return Design{}, err
		}
		d.Lock = &lockimpl.Impl{Name: f.Name, Summary: summary, Documented: documented, NewLocker: func(e lockimpl.Env) lockimpl.Locker {
			return &locker{name: f.Name, c: e.Locks[0], acquire: s["acquire"], release: s["release"], renew: s["renew"], held: s["held"]}
		}}
		for _, sc := range s {
			d.Lock.Seconds = d.Lock.Seconds || slices.Contains(sc.Args, TTLs)
		}
		return d, nil
	}
	s, err := d.scriptsOf(path, "queue", f.Queue, queueRoles)
	if err != nil {
		return Design{}, err
	}
	documented, err := queueVerdicts(f.Documented)
	if err != nil {
		return Design{}, err
	}
	leases, err := checkValues("lease_keys", f.LeaseKeys, queueKeys)
	if err != nil {
		return Design{}, err
	}
	d.Queue = &queueimpl.Impl{Name: f.Name, Summary: summary, Guarantee: f.Guarantee, Ordered: f.Ordered, Documented: documented,
		New: func(e queueimpl.Env) queueimpl.Queue { return newQueue(f.Name, e, s, leases) }}
	return d, nil
}

// scriptsOf reads the scripts of one kind of design, by role.
func (d *Design) scriptsOf(path, kind string, given map[string]scriptFile, roles []role) (map[string]*Script, error) {
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = r.name
	}
	for name := range given {
		if !slices.Contains(names, name) {
			return nil, fmt.Errorf("%s.%s: no such script (a %s has: %s)", kind, name, kind, strings.Join(names, ", "))
		}
	}
	out := make(map[string]*Script)
	for _, r := range roles {
		sf, ok := given[r.name]
		field := kind + "." + r.name
		if !ok {
			if r.required {
				return nil, fmt.Errorf("%s: missing (a %s needs %s)", field, kind, strings.Join(required(roles), ", "))
			}
			continue
		}
		s, err := newScript(path, field, r, sf)
		if err != nil {
			return nil, err
		}
		out[r.name] = s
		d.scripts = append(d.scripts, s)
	}
	return out, nil
}

func required(roles []role) []string {
	var out []string
	for _, r := range roles {
		if r.required {
			out = append(out, r.name)
		}
	}
	return out
}

// newScript reads one script's source and checks the names of its keys and args.
func newScript(path, field string, r role, sf scriptFile) (*Script, error) {
	src, origin := sf.Lua, field
	switch {
	case (sf.Lua == "") == (sf.File == ""):
		return nil, fmt.Errorf(`%s: give the script either inline ("lua") or as a file ("file")`, field)
	case sf.File != "":
		p := sf.File
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(path), p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("%s.file: %w", field, err)
		}
		src, origin = string(b), p
	}
	if strings.TrimSpace(src) == "" {
		return nil, fmt.Errorf("%s: the script is empty", field)
	}
	keys, err := checkValues(field+".keys", sf.Keys, r.keys)
	if err != nil {
		return nil, err
	}
	args, err := checkValues(field+".args", sf.Args, r.args)
	if err != nil {
		return nil, err
	}
	return &Script{Role: r.name, Origin: origin, Keys: keys, Args: args, script: redis.NewScript(src)}, nil
}

// JSONError says where a file's JSON is wrong: the line and column of a syntax error, the
// field of a value of the wrong type.
func JSONError(b []byte, err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		line, col := position(b, syntax.Offset-1) // Offset is past the offending byte
		return fmt.Errorf("line %d, column %d: %v", line, col, syntax)
	case errors.As(err, &typ):
		return fmt.Errorf("%s: want %s, got a JSON %s", typ.Field, typ.Type, typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return errors.New("the JSON ends early")
	}
	return err
}

// position is the line and column of a byte offset.
func position(b []byte, offset int64) (line, col int) {
	before := b[:min(int(offset), len(b))]
	line = bytes.Count(before, []byte("\n")) + 1
	return line, len(before) - bytes.LastIndexByte(before, '\n')
}
