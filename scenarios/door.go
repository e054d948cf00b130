package scenarios

import "sync"

// door is an application instance's limit on the buyers it serves at once
// (FlashSale.Serve): those inside try for the lock and hold it; the others wait in line,
// each an index of 4 bytes, first come first served.
type door struct {
	mu     sync.Mutex
	inside int
	line   []int32
	head   int
}

// enter lets buyer i in when fewer than limit are inside, and reports whether it did;
// else i waits in line.
func (d *door) enter(i, limit int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inside < limit {
		d.inside++
		return true
	}
	d.line = append(d.line, int32(i))
	return false
}

// next is the buyer that takes the place of one who left, if any is in line.
func (d *door) next() (int, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.head == len(d.line) {
		d.inside--
		d.line, d.head = d.line[:0], 0
		return 0, false
	}
	i := d.line[d.head]
	d.head++
	return int(i), true
}
