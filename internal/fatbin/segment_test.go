package fatbin

import (
	"encoding/binary"
	"slices"
	"testing"
)

func wrapper(magic uint32, addr uint64) []byte {
	b := make([]byte, wrapperSize)
	binary.LittleEndian.PutUint32(b, magic)
	binary.LittleEndian.PutUint32(b[4:], 1)
	binary.LittleEndian.PutUint64(b[8:], addr)
	return b
}

// TestContainerStarts: only addresses that leave room for a container
// header inside the section become offsets, sorted and unique; records
// without the wrapper magic, a trailing partial record and an unloaded
// section (address 0) give nothing.
func TestContainerStarts(t *testing.T) {
	const addr, off, size = 0x4000, 0x1000, 0x100
	var seg []byte
	for _, a := range []uint64{addr + 0x80, addr, addr + 0x80, addr + size - containerHeaderSize, addr + size - containerHeaderSize + 1, addr - 1, 0, ^uint64(0)} {
		seg = append(seg, wrapper(wrapperMagic, a)...)
	}
	seg = append(seg, wrapper(0x12345678, addr+0x40)...)
	seg = append(seg, wrapper(wrapperMagic, addr+0x20)[:wrapperSize-1]...)
	got := containerStarts(parseSegment(seg), addr, off, size)
	want := []int64{off, off + 0x80, off + size - containerHeaderSize}
	if !slices.Equal(got, want) {
		t.Errorf("containerStarts = %#x, want %#x", got, want)
	}
	if got := containerStarts(parseSegment(seg), 0, off, size); got != nil {
		t.Errorf("unloaded section: %#x, want none", got)
	}
	if got := containerStarts(parseSegment(seg), addr, off, containerHeaderSize-1); got != nil {
		t.Errorf("section smaller than a header: %#x, want none", got)
	}
}

// FuzzSegment: whatever the segment says, the starts lie inside the section
// with room for a container header, sorted and unique.
func FuzzSegment(f *testing.F) {
	f.Add(append(wrapper(wrapperMagic, 0x4000), wrapper(wrapperMagic, 0x4010)...), uint64(0x4000), int64(0x1000), int64(64))
	f.Add(wrapper(wrapperMagic, ^uint64(0)), uint64(1), int64(0), int64(1<<40))
	f.Fuzz(func(t *testing.T, seg []byte, addr uint64, off, size int64) {
		if off < 0 || size < 0 || off+size < off {
			return // NewFile checks the section range before this
		}
		starts := containerStarts(parseSegment(seg), addr, off, size)
		for i, s := range starts {
			if s < off || s > off+size-containerHeaderSize {
				t.Fatalf("start %d outside [%d, %d]", s, off, off+size-containerHeaderSize)
			}
			if i > 0 && s <= starts[i-1] {
				t.Fatalf("starts not sorted and unique: %v", starts)
			}
		}
	})
}
