package results

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stockbench/stockbench/oracle"
)

// Part is one shard's partial record of a sharded flash sale: its run, its buyers'
// ledger entries (entry i is the sale's buyer i*Count+Index) and, from the first shard,
// what Redis held once every shard was done. A run directory holds it as results.json,
// ledger.bin and final.json.
type Part struct {
	// ID is the sharded run's name, the same in every shard's part (results.json's id).
	ID        string
	Run       Run
	Entries   []oracle.Entry
	Unstarted int
	Final     *oracle.Final
	// Queue is, for a queue sale, the shard's orders (order i is the sale's
	// i*Count+Index) and its workers' takes, of any shard's orders; QueueFinal, from the
	// first shard, what Redis held once every shard was done. Entries is then empty.
	Queue      *oracle.QueueLedger
	QueueFinal *oracle.QueueFinal
}

// The files of a part beside its results.json.
const (
	ledgerFile      = "ledger.bin"
	finalFile       = "final.json"
	queueLedgerFile = "queue-ledger.json"
	queueFinalFile  = "queue-final.json"
)

// ledgerMagic opens ledger.bin: its format's name and version, then the entry count,
// the unstarted count and the entries, little-endian.
const ledgerMagic = "stockbench-ledger-1\n"

// WritePart writes p's ledger and final state into o's directory, beside the
// results.json that Progress writes.
func WritePart(o *Output, p Part) error {
	if err := o.make(); err != nil {
		return err
	}
	if p.Queue != nil {
		return errors.Join(writePartJSON(o, queueLedgerFile, p.Queue), writePartJSON(o, queueFinalFile, p.QueueFinal))
	}
	f, err := os.Create(filepath.Join(o.Dir, ledgerFile))
	if err != nil {
		return fmt.Errorf("results: write ledger: %w", err)
	}
	w := bufio.NewWriter(f)
	w.WriteString(ledgerMagic)
	err = binary.Write(w, binary.LittleEndian, [2]int64{int64(len(p.Entries)), int64(p.Unstarted)})
	if err == nil {
		err = binary.Write(w, binary.LittleEndian, p.Entries)
	}
	if err = errors.Join(err, w.Flush(), f.Close()); err != nil {
		return fmt.Errorf("results: write ledger: %w", err)
	}
	if p.Final == nil {
		return nil
	}
	b, err := json.MarshalIndent(p.Final, "", "  ")
	if err != nil {
		return fmt.Errorf("results: encode final state: %w", err)
	}
	if err := os.WriteFile(filepath.Join(o.Dir, finalFile), b, 0o644); err != nil {
		return fmt.Errorf("results: write final state: %w", err)
	}
	return nil
}

// ReadPart reads the part in dir, whose results.json must hold one shard's run.
func ReadPart(dir string) (Part, error) {
	path := filepath.Join(dir, "results.json")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return Part{}, fmt.Errorf("%s holds no shard's record (no results.json; stockbench run --shard writes one)", dir)
	}
	f, err := Read(path)
	if err != nil {
		return Part{}, err
	}
	if len(f.Runs) != 1 || f.Runs[0].Shard == nil || f.Runs[0].Shard.Merged {
		return Part{}, fmt.Errorf("%s holds no shard's record (stockbench run --shard writes one)", dir)
	}
	p := Part{ID: f.ID, Run: f.Runs[0]}
	p.Run.Source = dir
	if p.Run.Kind == QueueSale {
		return p, errors.Join(readPartJSON(dir, queueLedgerFile, &p.Queue), readPartJSON(dir, queueFinalFile, &p.QueueFinal))
	}
	if p.Entries, p.Unstarted, err = readLedger(filepath.Join(dir, ledgerFile)); err != nil {
		return Part{}, err
	}
	b, err := os.ReadFile(filepath.Join(dir, finalFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return Part{}, fmt.Errorf("results: read final state: %w", err)
	default:
		p.Final = new(oracle.Final)
		if err := json.Unmarshal(b, p.Final); err != nil {
			return Part{}, fmt.Errorf("results: %s: %w", filepath.Join(dir, finalFile), err)
		}
	}
	return p, nil
}

func readLedger(path string) ([]oracle.Entry, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("results: read ledger: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	magic := make([]byte, len(ledgerMagic))
	var counts [2]int64
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != ledgerMagic {
		return nil, 0, fmt.Errorf("results: %s is no stockbench ledger", path)
	}
	if err := binary.Read(r, binary.LittleEndian, &counts); err != nil {
		return nil, 0, fmt.Errorf("results: read ledger %s: %w", path, err)
	}
	n, unstarted := counts[0], counts[1]
	if st, err := f.Stat(); err != nil || n < 0 || unstarted < 0 || unstarted > n ||
		n*int64(binary.Size(oracle.Entry{})) > st.Size() {
		return nil, 0, fmt.Errorf("results: ledger %s is damaged (%d entries, %d unstarted)", path, n, unstarted)
	}
	entries := make([]oracle.Entry, n)
	if err := binary.Read(r, binary.LittleEndian, entries); err != nil {
		return nil, 0, fmt.Errorf("results: read ledger %s: %w", path, err)
	}
	return entries, int(unstarted), nil
}

// writePartJSON writes v, unless nil, as name in o's directory.
func writePartJSON[T any](o *Output, name string, v *T) error {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("results: encode %s: %w", name, err)
	}
	if err := os.WriteFile(filepath.Join(o.Dir, name), b, 0o644); err != nil {
		return fmt.Errorf("results: write %s: %w", name, err)
	}
	return nil
}

// readPartJSON reads name in dir into *v, leaving it nil when there is no such file.
func readPartJSON[T any](dir, name string, v **T) error {
	b, err := os.ReadFile(filepath.Join(dir, name))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("results: read %s: %w", name, err)
	}
	*v = new(T)
	if err := json.Unmarshal(b, *v); err != nil {
		return fmt.Errorf("results: %s: %w", filepath.Join(dir, name), err)
	}
	return nil
}
