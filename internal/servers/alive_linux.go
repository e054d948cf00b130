package servers

import (
	"os"
	"strconv"
	"strings"
)

// processStart is the process's start time in clock ticks since boot (field 22 of
// /proc/PID/stat), or "" when it cannot be read.
func processStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) may hold spaces and parentheses; fields after it don't.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	const startField = 22 - 3 // fields counted from 1; f starts at field 3
	if len(f) <= startField {
		return ""
	}
	return f[startField]
}
