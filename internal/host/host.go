// Package host reads what this machine can give a run: the memory it can still take, the
// files a process may open, the width of the terminal it prints to, and the stockbench
// checkout it runs in.
package host

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Memory is how many bytes a new process can take before the machine, or the cgroup it
// runs in, has none left: the kernel's MemAvailable, or the cgroup's limit less its use
// when that is lower. ok is false where neither can be read (not Linux); callers then
// check nothing.
func Memory() (bytes int64, ok bool) {
	avail, err := memAvailable("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	if left, err := cgroupLeft("/sys/fs/cgroup"); err == nil && left < avail {
		avail = left
	}
	return avail, true
}

// memAvailable reads MemAvailable from a /proc/meminfo.
func memAvailable(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("host: %s: %w", path, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("host: %s has no MemAvailable", path)
}

// cgroupLeft is a cgroup v2 limit less its current use; an error when there is no limit.
func cgroupLeft(dir string) (int64, error) {
	limit, err := os.ReadFile(dir + "/memory.max")
	if err != nil {
		return 0, err
	}
	limit = bytes.TrimSpace(limit)
	if string(limit) == "max" {
		return 0, errors.New("host: no cgroup memory limit")
	}
	max, err := strconv.ParseInt(string(limit), 10, 64)
	if err != nil {
		return 0, err
	}
	cur, err := os.ReadFile(dir + "/memory.current")
	if err != nil {
		return 0, err
	}
	used, err := strconv.ParseInt(string(bytes.TrimSpace(cur)), 10, 64)
	if err != nil {
		return 0, err
	}
	return max - used, nil
}

// Count prints n with thousands separated: 1,000,000.
func Count(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Size prints a byte count the way the refusals do: 4.7 KB, 1.2 GB.
func Size(b int64) string {
	const unit = 1000
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(b)/float64(div), "kMGTPE"[exp])
}
