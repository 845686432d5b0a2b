// Package zstd is a streaming decoder of Zstandard frames (RFC 8878,
// https://www.rfc-editor.org/rfc/rfc8878), written for fastpath's container
// image reader so that the binary does not link a general-purpose zstd
// library (whose package initialisation costs every command at start-up).
//
// It decodes what a container layer can hold: any number of zstd frames
// and skippable frames, concatenated; raw, RLE and compressed blocks;
// content checksums (XXH64, see xxhash.go). It refuses dictionaries and
// windows above the caller's cap. Nothing read from the input sizes an
// allocation beyond the window and the format's fixed maxima: memory is at
// most twice the window (history, and room to add to it before moving it
// back) plus about 1 MiB of buffers, grown only as the output proves long,
// never proportional to the content size.
package zstd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Error kinds, for errors.Is on an *Error.
var (
	ErrWindowTooLarge = errors.New("window larger than allowed")
	ErrDictionary     = errors.New("dictionaries are not supported")
	ErrChecksum       = errors.New("content checksum mismatch")
	ErrCorrupt        = errors.New("corrupt input")
	ErrClosed         = errors.New("reader closed")
)

// Error is a decoding failure at Offset, the position in the compressed
// stream where it was found.
type Error struct {
	Offset int64
	Kind   error // one of the Err values above, or io.ErrUnexpectedEOF
	Detail string
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("zstd: at offset %d: %v", e.Offset, e.Kind)
	}
	return fmt.Sprintf("zstd: at offset %d: %v: %s", e.Offset, e.Kind, e.Detail)
}

func (e *Error) Unwrap() error { return e.Kind }

const (
	frameMagic     = 0xFD2FB528
	skippableMagic = 0x184D2A50 // the low 4 bits are free
	inBufSize      = 256 << 10
	minWindow      = 1 << 10
)

// Reader decompresses a stream of zstd frames read from an io.Reader.
type Reader struct {
	src       io.Reader
	maxWindow int
	err       error // sticky

	// Input: in[inPos:inEnd] is read but not used; in[0] is at stream
	// offset inBase. in has slack bytes after inBufSize.
	in           []byte
	inPos, inEnd int
	inBase       int64
	srcErr       error

	// Output: hist[frameStart:histEnd] is the frame decoded so far (its
	// last window bytes at least); hist[readPos:histEnd] is not yet
	// returned by Read.
	hist       []byte
	histEnd    int
	readPos    int
	frameStart int
	histMax    int // the most hist may grow to for this frame

	// Frame state.
	inFrame     bool
	lastBlock   bool
	window      int
	blockMax    int
	hasChecksum bool
	contentSize int64 // -1 when the header does not say
	produced    int64
	hash        xxh64
	rep         [3]int

	// Tables that later blocks of the frame may repeat.
	huff       huffTable
	huffValid  bool
	tables     [3]seqTable
	ll, of, ml *seqTable

	lits          []byte
	seqs          []sequence
	fseScratch    [512]fseState
	weightScratch [64]fseState
}

// NewReader returns a Reader of the frames in r that refuses windows larger
// than maxWindow bytes. Nothing is read until the first Read.
func NewReader(r io.Reader, maxWindow int) (*Reader, error) {
	if maxWindow < minWindow {
		return nil, fmt.Errorf("zstd: maximum window %d is below the format's minimum %d", maxWindow, minWindow)
	}
	return &Reader{src: r, maxWindow: maxWindow}, nil
}

// Close releases the buffers; later reads fail.
func (r *Reader) Close() error {
	r.hist, r.in, r.lits = nil, nil, nil
	r.histEnd, r.readPos, r.inPos, r.inEnd = 0, 0, 0, 0
	r.err = ErrClosed
	return nil
}

// Read returns decompressed bytes.
func (r *Reader) Read(p []byte) (int, error) {
	for r.readPos == r.histEnd {
		if r.err != nil {
			return 0, r.err
		}
		r.err = r.step()
	}
	n := copy(p, r.hist[r.readPos:r.histEnd])
	r.readPos += n
	return n, nil
}

// WriteTo writes all the decompressed bytes to w.
func (r *Reader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		if r.readPos < r.histEnd {
			n, err := w.Write(r.hist[r.readPos:r.histEnd])
			total += int64(n)
			r.readPos += n
			if err != nil {
				return total, err
			}
			continue
		}
		if r.err != nil {
			if r.err == io.EOF {
				return total, nil
			}
			return total, r.err
		}
		r.err = r.step()
	}
}

func (r *Reader) fail(kind error, format string, args ...any) error {
	detail := format
	if len(args) > 0 {
		detail = fmt.Sprintf(format, args...)
	}
	return &Error{Offset: r.inBase + int64(r.inPos), Kind: kind, Detail: detail}
}

// fill makes at least n unread bytes available in in[inPos:inEnd], n <=
// inBufSize. It returns false at the end of input (or a read error) with
// fewer.
func (r *Reader) fill(n int) bool {
	if r.inEnd-r.inPos >= n {
		return true
	}
	if r.inPos+n > len(r.in)-slack {
		m := copy(r.in, r.in[r.inPos:r.inEnd])
		r.inBase += int64(r.inPos)
		r.inPos, r.inEnd = 0, m
		// The buffer starts small (a small frame costs little) and
		// doubles up to inBufSize as the input proves long.
		if size := len(r.in) - slack; size < inBufSize {
			in := make([]byte, min(max(2*size, n, 4<<10), inBufSize)+slack)
			copy(in, r.in[:r.inEnd])
			r.in = in
		}
	}
	for r.inEnd-r.inPos < n && r.srcErr == nil {
		m, err := r.src.Read(r.in[r.inEnd : len(r.in)-slack])
		r.inEnd += m
		if err != nil {
			r.srcErr = err
		}
	}
	return r.inEnd-r.inPos >= n
}

// truncated is the error for input that ended (or failed) too early.
func (r *Reader) truncated(what string) error {
	if r.srcErr != nil && r.srcErr != io.EOF {
		return r.srcErr
	}
	return r.fail(io.ErrUnexpectedEOF, "%s", what)
}

// step makes progress: it reads a frame header, decodes one block or
// checks a frame's end. It returns io.EOF after the last frame.
func (r *Reader) step() error {
	if !r.inFrame {
		return r.startFrame()
	}
	if r.lastBlock {
		return r.endFrame()
	}
	return r.decodeBlock()
}

func (r *Reader) startFrame() error {
	for {
		if !r.fill(4) {
			if r.inEnd == r.inPos && (r.srcErr == nil || r.srcErr == io.EOF) {
				return io.EOF
			}
			return r.truncated("frame magic number")
		}
		magic := binary.LittleEndian.Uint32(r.in[r.inPos:])
		if magic&^0xF == skippableMagic {
			if !r.fill(8) {
				return r.truncated("skippable frame header")
			}
			size := int64(binary.LittleEndian.Uint32(r.in[r.inPos+4:]))
			r.inPos += 8
			if err := r.skip(size); err != nil {
				return err
			}
			continue
		}
		if magic != frameMagic {
			return r.fail(ErrCorrupt, "not a zstd frame (magic %#08x)", magic)
		}
		return r.readFrameHeader()
	}
}

// skip discards n input bytes.
func (r *Reader) skip(n int64) error {
	for n > 0 {
		avail := int64(r.inEnd - r.inPos)
		if avail == 0 {
			if !r.fill(1) {
				return r.truncated("skippable frame")
			}
			continue
		}
		m := min(avail, n)
		r.inPos += int(m)
		n -= m
	}
	return nil
}

func (r *Reader) readFrameHeader() error {
	if !r.fill(5) {
		return r.truncated("frame header")
	}
	fhd := r.in[r.inPos+4]
	fcsFlag := fhd >> 6
	single := fhd&0x20 != 0
	if fhd&0x08 != 0 {
		return r.fail(ErrCorrupt, "reserved bit set in the frame header")
	}
	didSize := [4]int{0, 1, 2, 4}[fhd&3]
	fcsSize := [4]int{0, 2, 4, 8}[fcsFlag]
	if fcsFlag == 0 && single {
		fcsSize = 1
	}
	wdSize := 1
	if single {
		wdSize = 0
	}
	hsize := 5 + wdSize + didSize + fcsSize
	if !r.fill(hsize) {
		return r.truncated("frame header")
	}
	h := r.in[r.inPos : r.inPos+hsize]
	p := 5
	var window uint64
	if !single {
		wd := h[p]
		p++
		exp := uint(wd >> 3)
		base := uint64(1) << (10 + exp)
		window = base + base/8*uint64(wd&7)
	}
	var dict uint32
	switch didSize {
	case 1:
		dict = uint32(h[p])
	case 2:
		dict = uint32(binary.LittleEndian.Uint16(h[p:]))
	case 4:
		dict = binary.LittleEndian.Uint32(h[p:])
	}
	p += didSize
	if dict != 0 {
		return r.fail(ErrDictionary, "frame needs dictionary %d", dict)
	}
	r.contentSize = -1
	switch fcsSize {
	case 1:
		r.contentSize = int64(h[p])
	case 2:
		r.contentSize = int64(binary.LittleEndian.Uint16(h[p:])) + 256
	case 4:
		r.contentSize = int64(binary.LittleEndian.Uint32(h[p:]))
	case 8:
		v := binary.LittleEndian.Uint64(h[p:])
		if v > 1<<62 {
			return r.fail(ErrCorrupt, "frame content size %d", v)
		}
		r.contentSize = int64(v)
	}
	if single {
		window = uint64(r.contentSize)
	}
	if window > uint64(r.maxWindow) {
		return r.fail(ErrWindowTooLarge, "frame asks for a %d-byte window, the limit is %d", window, r.maxWindow)
	}
	r.inPos += hsize
	r.window = int(window)
	r.blockMax = min(r.window, maxBlockSize)
	r.hasChecksum = fhd&0x04 != 0
	r.inFrame = true
	r.lastBlock = false
	r.produced = 0
	r.hash.reset()
	r.rep = [3]int{1, 4, 8}
	r.huffValid = false
	r.ll, r.of, r.ml = nil, nil, nil
	// All earlier output has been read: the frame starts the buffer.
	r.histEnd, r.readPos, r.frameStart = 0, 0, 0
	// The buffer grows to twice the window (so that moving the window
	// back happens once per window of output) plus a block, or to the
	// content size when that is smaller.
	histMax := 2 * r.window
	if r.contentSize >= 0 && r.contentSize < int64(histMax) {
		histMax = int(r.contentSize)
	}
	r.histMax = histMax + r.blockMax + slack
	return nil
}

// makeRoom makes hist hold at least n more bytes plus slack after histEnd,
// growing the buffer up to histMax, then moving the last window of history
// to the front.
func (r *Reader) makeRoom(n int) {
	need := r.histEnd + n + slack
	if need <= len(r.hist) {
		return
	}
	if len(r.hist) < r.histMax {
		// Double while the output is small; once it passes 1 MiB the
		// frame has proven long: go straight to histMax (the doubling
		// steps above it would be as much garbage as the buffer).
		size := max(need, 2*len(r.hist), 64<<10)
		if size > 1<<20 {
			size = r.histMax
		}
		r.grow(min(size, r.histMax))
		if need <= len(r.hist) {
			return
		}
	}
	if drop := r.histEnd - r.window; drop > 0 {
		copy(r.hist, r.hist[drop:r.histEnd])
		r.histEnd -= drop
		r.readPos -= drop
		r.frameStart = max(r.frameStart-drop, 0)
	}
	if need = r.histEnd + n + slack; need > len(r.hist) {
		r.grow(need) // not reached: histMax leaves room for a block after a window
	}
}

func (r *Reader) grow(size int) {
	h := make([]byte, size)
	copy(h, r.hist[:r.histEnd])
	r.hist = h
}

func (r *Reader) decodeBlock() error {
	if !r.fill(3) {
		return r.truncated("block header")
	}
	in := r.in[r.inPos:]
	bh := int(in[0]) | int(in[1])<<8 | int(in[2])<<16
	last := bh&1 != 0
	typ := (bh >> 1) & 3
	size := bh >> 3
	if typ == 3 {
		return r.fail(ErrCorrupt, "reserved block type")
	}
	if size > r.blockMax {
		return r.fail(ErrCorrupt, "block of %d bytes exceeds the maximum %d", size, r.blockMax)
	}
	var start int
	switch typ {
	case 0: // raw
		if !r.fill(3 + size) {
			return r.truncated("raw block")
		}
		r.makeRoom(size)
		start = r.histEnd
		copy(r.hist[r.histEnd:], r.in[r.inPos+3:r.inPos+3+size])
		r.histEnd += size
		r.inPos += 3 + size
	case 1: // RLE
		if !r.fill(4) {
			return r.truncated("RLE block")
		}
		r.makeRoom(size)
		start = r.histEnd
		c := r.in[r.inPos+3]
		out := r.hist[r.histEnd : r.histEnd+size]
		for i := range out {
			out[i] = c
		}
		r.histEnd += size
		r.inPos += 4
	case 2:
		if !r.fill(3 + size) {
			return r.truncated("compressed block")
		}
		r.makeRoom(r.blockMax)
		start = r.histEnd
		blockOff := r.inPos
		src := r.in[r.inPos+3 : r.inPos+3+size]
		srcSlack := r.in[r.inPos+3 : r.inPos+3+size+slack]
		if why := r.decodeCompressed(src, srcSlack); why != "" {
			r.histEnd = start
			r.inPos = blockOff
			return r.fail(ErrCorrupt, "compressed block: %s", why)
		}
		r.inPos += 3 + size
	}
	out := r.hist[start:r.histEnd]
	r.produced += int64(len(out))
	if r.contentSize >= 0 && r.produced > r.contentSize {
		return r.fail(ErrCorrupt, "frame larger than its declared content size %d", r.contentSize)
	}
	if r.hasChecksum {
		r.hash.write(out)
	}
	r.lastBlock = last
	return nil
}

func (r *Reader) endFrame() error {
	if r.contentSize >= 0 && r.produced != r.contentSize {
		return r.fail(ErrCorrupt, "frame has %d bytes, its header says %d", r.produced, r.contentSize)
	}
	if r.hasChecksum {
		if !r.fill(4) {
			return r.truncated("content checksum")
		}
		want := binary.LittleEndian.Uint32(r.in[r.inPos:])
		if got := uint32(r.hash.sum()); got != want {
			return r.fail(ErrChecksum, "content checksum %#08x, computed %#08x", want, got)
		}
		r.inPos += 4
	}
	r.inFrame = false
	return nil
}
