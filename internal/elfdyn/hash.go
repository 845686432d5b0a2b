package elfdyn

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"slices"
	"sync"
)

// Symbol lookups through the object's own hash table (.gnu.hash, else the
// SysV .hash), the way the dynamic linker finds a name: the table is read
// once (a few MB for libtorch_cpu.so, whose .dynsym and .dynstr are about
// 60 MB), and only the symbol entries and name bytes of hash-equal
// candidates are read after it. Asking "does torch define these 2,000
// names" then reads a few MB instead of every symbol of every library.
//
// Every number in the table is checked before it is used: bucket and chain
// indexes against the symbol count, chain walks against the chain length,
// the table against MaxHashBytes and the file's size.

// MaxHashBytes caps the hash table read from one file. A .gnu.hash holds
// about 4 bytes per defined symbol plus its buckets and bloom filter:
// libtorch_cpu.so (some 400,000 symbols) needs about 2 MB. A SysV .hash
// holds 4 bytes per symbol and per bucket.
const MaxHashBytes = 64 << 20

// maxLookupRead caps one coalesced read of symbol entries or names.
const maxLookupRead = 1 << 20

// lookupReaders is how many coalesced reads one lookup has in flight, and
// maxInFlight how many bytes they may hold together.
const (
	lookupReaders = 16
	maxInFlight   = 2 << 20
)

// coalesceGap is how far apart two wanted byte ranges may be and still be
// fetched with one read: one read of a page is cheaper than two syscalls.
const coalesceGap = 4 << 10

// ErrNoHash means the object has neither .gnu.hash nor .hash linked to its
// dynamic symbol table; callers fall back to Symbols.
var ErrNoHash = errors.New("elfdyn: no symbol hash table")

// HashTable answers symbol lookups by name.
type HashTable struct {
	f    *File
	gnu  bool
	nsym uint32 // entries in .dynsym

	// .gnu.hash
	symOffset  uint32
	bloom      []uint64 // ELF32 bloom words are widened
	bloomBits  uint32   // 64 or 32
	bloomShift uint32
	// both: buckets, and chains (.gnu.hash: hash values of symbols from
	// symOffset on; .hash: next symbol indexes), left as the file's bytes
	// and decoded per lookup: a lookup touches a few words of them.
	buckets words
	chains  words
}

// words is an array of 32-bit words in the file's byte order.
type words struct {
	b     []byte
	order binary.ByteOrder
}

func (w words) len() uint32               { return uint32(len(w.b) / 4) }
func (w words) at(i uint32) uint32        { return w.order.Uint32(w.b[4*uint64(i):]) }
func (h *HashTable) words(b []byte) words { return words{b[:len(b)/4*4], h.f.order} }

// HashTable reads the object's .gnu.hash (preferred: it has a bloom filter
// that rejects most names without touching a chain) or .hash. ErrNoHash when
// it has neither, or no dynamic symbol table.
func (f *File) HashTable() (*HashTable, error) { return f.hashTable(true) }

// hashTable reads .gnu.hash when preferGNU and present, else .hash (tests
// read both tables of objects that carry both).
func (f *File) hashTable(preferGNU bool) (*HashTable, error) {
	if !f.hasTable {
		return nil, ErrNoDynamic
	}
	entSize := uint64(24)
	if f.Class == elf.ELFCLASS32 {
		entSize = 16
	}
	nsym := f.dynsym.Size / entSize
	if nsym > 1<<31 {
		return nil, formatErr(".dynsym of %d entries", nsym)
	}
	var gnu, sysv *Section
	for i := range f.Sections {
		s := &f.Sections[i]
		if int(s.Link) != f.dynsymAt {
			continue
		}
		switch s.Type {
		case elf.SHT_GNU_HASH:
			if gnu == nil {
				gnu = s
			}
		case elf.SHT_HASH:
			if sysv == nil {
				sysv = s
			}
		}
	}
	h := &HashTable{f: f, nsym: uint32(nsym)}
	if !preferGNU && sysv != nil {
		gnu = nil
	}
	switch {
	case gnu != nil:
		h.gnu = true
		return h, h.readGNU(*gnu)
	case sysv != nil:
		return h, h.readSysV(*sysv)
	}
	return nil, ErrNoHash
}

// readSection reads a whole hash section after checking it against the
// cap; Open already checked it lies inside the file.
func (h *HashTable) readSection(s Section) ([]byte, error) {
	if s.Size > MaxHashBytes {
		return nil, formatErr("hash table %q of %d bytes (cap %d)", s.Name, s.Size, MaxHashBytes)
	}
	if s.Offset > uint64(h.f.size) || s.Size > uint64(h.f.size)-s.Offset {
		return nil, formatErr("hash table %q runs past the end of the file", s.Name)
	}
	b := make([]byte, s.Size)
	if _, err := h.f.r.ReadAt(b, int64(s.Offset)); err != nil {
		return nil, formatErr("reading %s: %v", s.Name, err)
	}
	return b, nil
}

func (h *HashTable) readGNU(s Section) error {
	b, err := h.readSection(s)
	if err != nil {
		return err
	}
	if len(b) < 16 {
		return formatErr(".gnu.hash of %d bytes", len(b))
	}
	o := h.f.order
	nbuckets, symOffset, bloomSize, shift := o.Uint32(b[0:]), o.Uint32(b[4:]), o.Uint32(b[8:]), o.Uint32(b[12:])
	word := uint64(8)
	h.bloomBits = 64
	if h.f.Class == elf.ELFCLASS32 {
		word, h.bloomBits = 4, 32
	}
	rest := uint64(len(b) - 16)
	// Each count is bounded by the bytes present before it is multiplied.
	if nbuckets == 0 || bloomSize == 0 || uint64(bloomSize) > rest/word || uint64(nbuckets) > (rest-uint64(bloomSize)*word)/4 {
		return formatErr(".gnu.hash: %d buckets and %d bloom words do not fit in %d bytes", nbuckets, bloomSize, len(b))
	}
	if symOffset > h.nsym {
		return formatErr(".gnu.hash: first hashed symbol %d of %d", symOffset, h.nsym)
	}
	if bloomSize&(bloomSize-1) != 0 {
		return formatErr(".gnu.hash: bloom size %d is not a power of two", bloomSize)
	}
	h.symOffset, h.bloomShift = symOffset, shift%h.bloomBits
	off := uint64(16)
	h.bloom = make([]uint64, bloomSize)
	for i := range h.bloom {
		if word == 8 {
			h.bloom[i] = o.Uint64(b[off:])
		} else {
			h.bloom[i] = uint64(o.Uint32(b[off:]))
		}
		off += word
	}
	h.buckets = h.words(b[off : off+uint64(nbuckets)*4])
	off += uint64(nbuckets) * 4
	// The chain has one word per hashed symbol; a longer section carries
	// padding, a shorter one is cut at what is there (walks stop at its end).
	chains := b[off:]
	if n := uint64(h.nsym - symOffset); uint64(len(chains))/4 > n {
		chains = chains[:4*n]
	}
	h.chains = h.words(chains)
	return nil
}

func (h *HashTable) readSysV(s Section) error {
	b, err := h.readSection(s)
	if err != nil {
		return err
	}
	if len(b) < 8 {
		return formatErr(".hash of %d bytes", len(b))
	}
	nbucket, nchain := h.f.order.Uint32(b[0:]), h.f.order.Uint32(b[4:])
	rest := uint64(len(b) - 8)
	if nbucket == 0 || uint64(nbucket) > rest/4 || uint64(nchain) > (rest-uint64(nbucket)*4)/4 {
		return formatErr(".hash: %d buckets and %d chains do not fit in %d bytes", nbucket, nchain, len(b))
	}
	h.buckets = h.words(b[8 : 8+uint64(nbucket)*4])
	h.chains = h.words(b[8+uint64(nbucket)*4 : 8+uint64(nbucket)*4+uint64(nchain)*4])
	return nil
}

// gnuHash is the hash of .gnu.hash (Drepper's DJB variant: h*33 + c).
// Four bytes are folded in at a time, h*33^4 + c0*33^3 + c1*33^2 + c2*33 +
// c3, the same value modulo 2^32: the products of the bytes do not wait on
// each other, where one byte at a time waits on the multiply before it. A
// C++ name is some 80 bytes, and the ABI check hashes tens of thousands.
func gnuHash(name string) uint32 {
	const k1, k2, k3, k4 = 33, 33 * 33, 33 * 33 * 33, 33 * 33 * 33 * 33
	h := uint32(5381)
	i := 0
	for ; i+4 <= len(name); i += 4 {
		h = h*k4 + uint32(name[i])*k3 + uint32(name[i+1])*k2 + uint32(name[i+2])*k1 + uint32(name[i+3])
	}
	for ; i < len(name); i++ {
		h = h*33 + uint32(name[i])
	}
	return h
}

// sysvHash is the hash of the System V ABI's .hash section.
func sysvHash(name string) uint32 {
	var h uint32
	for i := 0; i < len(name); i++ {
		h = h<<4 + uint32(name[i])
		g := h & 0xf0000000
		h ^= g >> 24
		h &^= g
	}
	return h
}

// candidates appends the symbol indexes whose hash equals name's.
func (h *HashTable) candidates(name string, out []uint32) []uint32 {
	if h.gnu {
		hv := gnuHash(name)
		w := h.bloom[(hv/h.bloomBits)&uint32(len(h.bloom)-1)]
		mask := uint64(1)<<(hv%h.bloomBits) | uint64(1)<<((hv>>h.bloomShift)%h.bloomBits)
		if w&mask != mask {
			return out
		}
		i := h.buckets.at(hv % h.buckets.len())
		if i == 0 || i < h.symOffset {
			return out
		}
		for j := i - h.symOffset; j < h.chains.len(); j++ {
			c := h.chains.at(j)
			if c|1 == hv|1 {
				out = append(out, h.symOffset+j)
			}
			if c&1 != 0 {
				break
			}
		}
		return out
	}
	i := h.buckets.at(sysvHash(name) % h.buckets.len())
	// A chain visits each symbol at most once; more steps mean a cycle.
	for steps := uint32(0); i != 0 && i < h.chains.len() && steps <= h.chains.len(); steps++ {
		out = append(out, i)
		i = h.chains.at(i)
	}
	return out
}

// Defined reports, for each name, whether the object defines and exports it
// (global, weak or unique binding, not SHN_UNDEF), as Symbols would find by
// reading every entry. It reads only the entries and names of candidates
// whose hash matches, sorted by offset and coalesced into few reads.
//
// Candidates are kept as one uint64 each, the offset's index in the high
// half and the name's index in the low one, so that sorting them by offset
// is a sort of integers: the 2,048 torch-linking extensions of the scale
// tree ask libtorch_cpu.so about 40,000 names.
func (h *HashTable) Defined(names []string) ([]bool, error) {
	if uint64(len(names)) > math.MaxUint32 {
		return nil, formatErr("%d names asked at once", len(names))
	}
	cands := h.allCandidates(names) // symbol index << 32 | name index
	found := make([]bool, len(names))
	if len(cands) == 0 {
		return found, nil
	}
	f := h.f
	entSize := uint64(24)
	if f.Class == elf.ELFCLASS32 {
		entSize = 16
	}
	slices.Sort(cands)
	// Symbol entries: bind, section index and name offset of each
	// candidate; those defined and exported go on, as name offset << 32 |
	// name index.
	named := make([]uint64, 0, len(cands))
	err := readCoalesced(f, len(cands), func(i int) (uint64, uint64) {
		return f.dynsym.Offset + cands[i]>>32*entSize, entSize
	}, func(i int, e []byte) {
		var name uint32
		var info uint8
		var shndx uint16
		if f.Class == elf.ELFCLASS64 {
			name, info, shndx = f.order.Uint32(e[0:]), e[4], f.order.Uint16(e[6:])
		} else {
			name, info, shndx = f.order.Uint32(e[0:]), e[12], f.order.Uint16(e[14:])
		}
		sym := Symbol{Bind: elf.ST_BIND(info), Defined: elf.SectionIndex(shndx) != elf.SHN_UNDEF}
		if sym.Defined && Exported(sym) && uint64(name) < f.dynstr.Size {
			named = append(named, uint64(name)<<32|cands[i]&math.MaxUint32)
		}
	})
	if err != nil {
		return nil, err
	}
	// Names: compare the len+1 bytes at each defined candidate's name offset.
	slices.Sort(named)
	end := f.dynstr.Offset + f.dynstr.Size
	err = readCoalesced(f, len(named), func(i int) (uint64, uint64) {
		// Never past the string table: a name at its end is cut short and
		// so does not match.
		off := f.dynstr.Offset + named[i]>>32
		return off, min(uint64(len(names[named[i]&math.MaxUint32]))+1, end-off)
	}, func(i int, b []byte) {
		n := named[i] & math.MaxUint32
		want := names[n]
		if len(b) == len(want)+1 && b[len(want)] == 0 && string(b[:len(want)]) == want {
			found[n] = true
		}
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}

// parallelNames is how many names make Defined hash them on every core:
// hashing and walking the table for tens of thousands of names is most of
// a lookup's time, and the ABI check has the cores to itself by then.
const parallelNames = 8192

// allCandidates returns the candidates of every name, as symbol index << 32
// | name index, in no particular order.
func (h *HashTable) allCandidates(names []string) []uint64 {
	collect := func(names []string, first int, out []uint64) []uint64 {
		var buf []uint32
		for k, name := range names {
			buf = h.candidates(name, buf[:0])
			for _, s := range buf {
				if s == 0 || s >= h.nsym {
					continue
				}
				out = append(out, uint64(s)<<32|uint64(first+k))
			}
		}
		return out
	}
	parts := min(runtime.GOMAXPROCS(0), len(names)/parallelNames)
	if parts < 2 {
		return collect(names, 0, make([]uint64, 0, len(names)))
	}
	found := make([][]uint64, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*len(names)/parts, (p+1)*len(names)/parts
		wg.Go(func() { found[p] = collect(names[lo:hi], lo, make([]uint64, 0, hi-lo)) })
	}
	wg.Wait()
	total := 0
	for _, f := range found {
		total += len(f)
	}
	out := make([]uint64, 0, total)
	for _, f := range found {
		out = append(out, f...)
	}
	return out
}

// batchBufs recycles readCoalesced's buffer: one per call, as big as its
// largest batch (maxInFlight bytes at most, unless one range alone is
// bigger), shared by the batch's reads. An ABI check of a few thousand
// extensions against libtorch_cpu.so reads most of its symbol and string
// tables (13 MB) a batch at a time; a buffer per read, or a pool of buffers
// of every size, made several MB of garbage a run.
var batchBufs sync.Pool // *[]byte

// readCoalesced reads n byte ranges, given sorted by offset, merging ranges
// closer than coalesceGap into one read of at most maxLookupRead bytes, and
// hands each range's bytes to use, in order. The merged reads go out
// lookupReaders at a time: on a cold page cache each is a random disk read
// (a symbol entry, a name, somewhere in 60 MB of libtorch_cpu.so's tables),
// and a disk serves many at once faster than one after another.
func readCoalesced(f *File, n int, at func(int) (off, size uint64), use func(int, []byte)) error {
	type run struct {
		first, last int // ranges [first, last)
		start, end  uint64
		buf         []byte
		err         error
	}
	var runs []run
	for i := 0; i < n; {
		start, _ := at(i)
		end := start
		j := i
		for ; j < n; j++ {
			off, size := at(j)
			if j > i && (off > end+coalesceGap || off+size-start > maxLookupRead) {
				break
			}
			end = max(end, off+size)
		}
		if end > uint64(f.size) || start > end {
			return formatErr("symbol lookup reads past the end of the file")
		}
		runs = append(runs, run{first: i, last: j, start: start, end: end})
		i = j
	}
	// In batches of at most maxInFlight bytes: a lookup of 40,000 names
	// touches most of libtorch_cpu.so's tables, and holding every buffer at
	// once would cost that much memory.
	var batches []int // runs in each batch
	var need uint64   // bytes of the largest batch
	for i := 0; i < len(runs); {
		batch, bytes := 1, runs[i].end-runs[i].start
		for i+batch < len(runs) && bytes+(runs[i+batch].end-runs[i+batch].start) <= maxInFlight {
			bytes += runs[i+batch].end - runs[i+batch].start
			batch++
		}
		batches = append(batches, batch)
		need = max(need, bytes)
		i += batch
	}
	bp, _ := batchBufs.Get().(*[]byte)
	if bp == nil || uint64(cap(*bp)) < need {
		b := make([]byte, need)
		bp = &b
	}
	defer func() {
		if cap(*bp) <= maxInFlight {
			batchBufs.Put(bp)
		}
	}()
	for _, batch := range batches {
		used := uint64(0)
		for k := range runs[:batch] {
			r := &runs[k]
			r.buf = (*bp)[used : used+r.end-r.start]
			used += r.end - r.start
		}
		next := make(chan *run)
		var wg sync.WaitGroup
		for range min(lookupReaders, batch) {
			wg.Go(func() {
				for r := range next {
					if _, err := f.r.ReadAt(r.buf, int64(r.start)); err != nil {
						r.err = formatErr("reading symbols: %v", err)
					}
				}
			})
		}
		for k := range runs[:batch] {
			next <- &runs[k]
		}
		close(next)
		wg.Wait()
		for _, r := range runs[:batch] {
			if r.err != nil {
				return r.err
			}
			for k := r.first; k < r.last; k++ {
				off, size := at(k)
				use(k, r.buf[off-r.start:off-r.start+size])
			}
		}
		runs = runs[batch:]
	}
	return nil
}
