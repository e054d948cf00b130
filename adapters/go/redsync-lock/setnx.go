//go:build setnx

package main

import "github.com/go-redsync/redsync/v4"

// setNXOnExtend is WithSetNXOnExtend, in a build against redsync v4.12.0 or later (make
// go-adapters REDSYNC=... adds the tag when the release has it).
func setNXOnExtend() (redsync.Option, bool) { return redsync.WithSetNXOnExtend(), true }
