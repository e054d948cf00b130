//go:build !setnx

package main

import "github.com/go-redsync/redsync/v4"

// setNXOnExtend: this build's redsync is older than WithSetNXOnExtend (v4.12.0).
func setNXOnExtend() (redsync.Option, bool) { return nil, false }
