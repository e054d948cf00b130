package faults

import (
	"fmt"
	"strings"
)

// Persistence is how the server a fault restarts keeps its data on disk: what a restart
// (redis-restart's persist setting) gives back.
type Persistence string

// The modes, from least kept to most.
const (
	// PersistNone keeps nothing: the server restarts empty. The default.
	PersistNone Persistence = "none"
	// PersistRDB snapshots the data set at most once a second, when anything changed
	// (save 1 1): a kill loses what changed since the last snapshot.
	PersistRDB Persistence = "rdb"
	// PersistAOFEverysec appends every write to the AOF and fsyncs it once a second: a
	// host failure loses about the last second of writes, and even a kill of the process
	// can lose up to 2 s of acknowledged ones, which Redis holds back from the kernel
	// while a slow background fsync is still running.
	PersistAOFEverysec Persistence = "aof-everysec"
	// PersistAOFAlways fsyncs the AOF before every reply: a kill loses no write a client
	// was told succeeded.
	PersistAOFAlways Persistence = "aof-always"
)

// Persistences lists the modes, in the order above.
var Persistences = []Persistence{PersistNone, PersistRDB, PersistAOFEverysec, PersistAOFAlways}

// Args are the redis-server arguments that set the mode, after the harness's own (which
// turn persistence off).
func (p Persistence) Args() []string {
	switch p {
	case PersistRDB:
		return []string{"--save", "1 1"}
	case PersistAOFEverysec:
		return []string{"--appendonly", "yes", "--appendfsync", "everysec"}
	case PersistAOFAlways:
		return []string{"--appendonly", "yes", "--appendfsync", "always"}
	}
	return nil
}

// kept says what a restart in mode p gives back, for the fault's event.
func (p Persistence) kept() string {
	switch p {
	case PersistRDB:
		return "from its last snapshot (rdb, save 1 1)"
	case PersistAOFEverysec:
		return "from its AOF (appendfsync everysec)"
	case PersistAOFAlways:
		return "from its AOF (appendfsync always)"
	}
	return "empty"
}

func parsePersistence(s string) (Persistence, error) {
	for _, p := range Persistences {
		if string(p) == s {
			return p, nil
		}
	}
	names := make([]string, len(Persistences))
	for i, p := range Persistences {
		names[i] = string(p)
	}
	return "", fmt.Errorf("unknown persistence mode (known: %s)", strings.Join(names, ", "))
}
