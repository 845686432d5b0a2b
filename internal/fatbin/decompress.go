package fatbin

import (
	"bytes"
	"errors"
	"io"

	"github.com/fastpath-dev/fastpath/internal/zstd"
)

// maxDecompressed caps the uncompressed size of one entry that is ever decompressed
// (the kernel scan's cubins): the entry header declares it, and an entry declaring
// more is not opened. Real cubins are far smaller: the largest in torch 2.11's
// libtorch_cuda.so is a few MB.
const maxDecompressed = maxKernelScan

var errDecompress = errors.New("fatbin: payload does not decompress to its declared size")

// payload returns entry e's payload, read from r (the file e was read from),
// uncompressed: the padded payload of a plain entry in place, or the decompressed
// bytes of a compressed one. Compressed payloads are read only when the header's
// sizes are consistent (the compressed size within the padded payload, both sizes
// at most maxDecompressed bytes) and must decompress to
// exactly the declared size; nothing larger is ever allocated. Codecs, read off
// nvcc 13.0's builds of axpy.cu (testdata/real/nvcc-13.0): a zstd frame for
// FlagZstd (-Xfatbin=-compress-all, --compress-mode=size), a raw LZ4 block (no
// frame, no size prefix) for FlagLZ4 (--compress-mode=speed).
func (e Entry) payload(r io.ReaderAt) (*io.SectionReader, error) {
	start := e.Offset + int64(e.HeaderSize)
	if e.PayloadSize > 1<<62 || start < 0 {
		return nil, errDecompress
	}
	if e.Compression == CompressionNone {
		return io.NewSectionReader(r, start, int64(e.PayloadSize)), nil
	}
	if e.CompressedSize == 0 || e.CompressedSize > e.PayloadSize || e.CompressedSize > maxDecompressed ||
		e.UncompressedSize == 0 || e.UncompressedSize > maxDecompressed {
		return nil, errDecompress
	}
	src := make([]byte, e.CompressedSize)
	if n, err := r.ReadAt(src, start); n != len(src) {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	var dst []byte
	switch e.Compression {
	case CompressionZstd:
		dst = unzstd(src, int(e.UncompressedSize))
	case CompressionLZ4:
		// An LZ4 block grows at most about 255-fold (a match length adds 255 per
		// input byte): a larger declared size is a lie, refused before allocating.
		if e.UncompressedSize/255 > e.CompressedSize+1 {
			return nil, errDecompress
		}
		dst = make([]byte, e.UncompressedSize)
		if !unlz4(dst, src) {
			dst = nil
		}
	}
	if dst == nil {
		return nil, errDecompress
	}
	return io.NewSectionReader(bytes.NewReader(dst), 0, int64(len(dst))), nil
}

// unzstd decompresses the zstd frame(s) in src, which must hold exactly size
// bytes: nil when they hold fewer or more, or do not decode. The output buffer
// grows only as the frames prove long (a hostile header's size costs nothing
// until the bytes are there), and the window is capped at size (a frame's window
// need not exceed its content), with the format's minimum.
func unzstd(src []byte, size int) []byte {
	zr, err := zstd.NewReader(bytes.NewReader(src), max(size, 1<<10))
	if err != nil {
		return nil
	}
	defer zr.Close()
	var b bytes.Buffer
	b.Grow(min(size, 4*len(src)+512))
	if _, err := b.ReadFrom(io.LimitReader(zr, int64(size)+1)); err != nil || b.Len() != size {
		return nil
	}
	return b.Bytes()
}

// unlz4 decodes one raw LZ4 block (https://github.com/lz4/lz4/blob/dev/doc/lz4_Block_format.md)
// from src into exactly dst: false when it is malformed, would write past dst, reaches
// before its start, or fills less than dst. Every length is checked against what is
// left of src and dst before use, so hostile input costs at most len(src)+len(dst)
// steps and no allocation.
func unlz4(dst, src []byte) bool {
	d, s := 0, 0
	for s < len(src) {
		tok := src[s]
		s++
		lit := int(tok >> 4)
		if lit == 15 {
			for {
				if s >= len(src) {
					return false
				}
				b := src[s]
				s++
				lit += int(b)
				if lit > len(dst) {
					return false
				}
				if b != 255 {
					break
				}
			}
		}
		if lit > len(src)-s || lit > len(dst)-d {
			return false
		}
		d += copy(dst[d:], src[s:s+lit])
		s += lit
		if s == len(src) {
			break // the last sequence holds literals only
		}
		if len(src)-s < 2 {
			return false
		}
		off := int(src[s]) | int(src[s+1])<<8
		s += 2
		if off == 0 || off > d {
			return false
		}
		n := int(tok & 15)
		if n == 15 {
			for {
				if s >= len(src) {
					return false
				}
				b := src[s]
				s++
				n += int(b)
				if n > len(dst) {
					return false
				}
				if b != 255 {
					break
				}
			}
		}
		n += 4 // minmatch
		if n > len(dst)-d {
			return false
		}
		if off >= n {
			copy(dst[d:d+n], dst[d-off:])
		} else {
			for i := range n { // overlapping: a run repeating the last off bytes
				dst[d+i] = dst[d-off+i]
			}
		}
		d += n
	}
	return d == len(dst)
}
