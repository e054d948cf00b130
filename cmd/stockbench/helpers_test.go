package main

import "strings"

// lastLine is the last line of what a command printed.
func lastLine(b []byte) string {
	s := strings.TrimRight(string(b), "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}
