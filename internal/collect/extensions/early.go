package extensions

import (
	"context"
	"runtime"
	"sync"

	"github.com/fastpath-dev/fastpath/internal/source"
)

// Early reads native files while the Python collector is still reading the
// environment's metadata: the Python collector hands over each
// distribution's native files as soon as it has read its RECORD (Add), and
// Collect then takes what was read instead of reading it again. On 5,000
// distributions the metadata reads leave a core idle about a third of the
// time, and the extension reads used to start only after all of them.
//
// What Early reads is what Collect would read, and read the same way
// (collector.read, a pure function of the file), so the facts do not depend
// on which of the two read a file. Its warnings are kept with each file and
// given to Collect only for the files Collect keeps, so a file that Collect
// would not read (of a shadowed distribution, or past MaxFiles in pip's
// order) adds nothing. At most MaxFiles files are read early.
type Early struct {
	ctx context.Context
	src source.Source

	mu      sync.Mutex
	queue   chan job
	queued  int
	stopped bool
	// done is what was read, by path (a string key hashes faster than the
	// whole job, and the map grows to thousands of entries); the job is
	// kept to tell two distributions listing one path apart.
	done map[string]earlyRead
	wg   sync.WaitGroup
}

type earlyRead struct {
	job   job
	m     *module
	warns []string
}

// NewEarly starts the early readers on src; Collect stops them.
func NewEarly(ctx context.Context, src source.Source) *Early {
	e := &Early{ctx: ctx, src: src, queue: make(chan job, MaxFiles), done: map[string]earlyRead{}}
	// Twice the cores: the metadata readers take the rest, and a
	// worker waiting on a cold disk leaves its core to the others.
	for range runtime.GOMAXPROCS(0) * 2 {
		e.wg.Go(func() {
			for j := range e.queue {
				e.mu.Lock()
				stopped := e.stopped
				e.mu.Unlock()
				if stopped || e.ctx.Err() != nil {
					continue // Collect reads what is left itself
				}
				c := &collector{src: e.src}
				source.AcquireReader() // the descriptor budget (source/readers.go)
				m := c.read(j)
				source.ReleaseReader()
				e.mu.Lock()
				// A second job of the same path replaces the first, which
				// Collect then reads itself.
				e.done[j.path] = earlyRead{job: j, m: m, warns: c.warns}
				e.mu.Unlock()
			}
		})
	}
	return e
}

// Add queues the native files (RECORD paths, relative to location) of one
// distribution for reading. It is safe to call from several goroutines.
func (e *Early) Add(dist, version, location string, files []string) {
	if e == nil || len(files) == 0 || skipDist(dist) {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, rel := range files {
		if e.stopped || e.queued >= MaxFiles {
			return
		}
		e.queued++
		e.queue <- newJob(dist, version, location, rel) // never blocks: MaxFiles slots
	}
}

// stop ends the early reading: files not started yet are left to Collect.
func (e *Early) stop() {
	e.mu.Lock()
	if !e.stopped {
		e.stopped = true
		close(e.queue)
	}
	e.mu.Unlock()
	e.wg.Wait()
}

// take returns what was read early for j.
func (e *Early) take(j job) (earlyRead, bool) {
	if e == nil {
		return earlyRead{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.done[j.path]
	if !ok || r.job != j {
		return earlyRead{}, false
	}
	delete(e.done, j.path) // a job listed twice is read again, as before
	return r, true
}
