//go:build long

package designfile

import (
	"testing"

	"github.com/stockbench/stockbench/faults"
)

// TestTokenScriptsOnServers: the token lock written as scripts earns what the built-in
// token lock documents under every fault on its servers and the network.
func TestTokenScriptsOnServers(t *testing.T) { tokenScriptsEarn(t, plansOf(faults.Locks, true)) }

// TestReliableScriptsOnServers: reliable-list written as scripts earns what the built-in
// reliable-list documents under every fault on its server.
func TestReliableScriptsOnServers(t *testing.T) { reliableScriptsEarn(t, plansOf(faults.Queues, true)) }
