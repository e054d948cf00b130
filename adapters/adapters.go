// Package adapters carries the shipped adapters' protocol helpers, for stockbench init to
// copy beside a new adapter in the same language: each is the file this folder's own
// adapters use (PROTOCOL.md says what they speak).
package adapters

import "embed"

// Helpers are the protocol helpers, by the path each has here.
//
//go:embed node/protocol.js php/protocol.php python/stockbench_adapters/protocol.py ruby/lib/stockbench_adapters/protocol.rb
var Helpers embed.FS
