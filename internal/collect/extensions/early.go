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

	mu sync.Mutex
	// queue holds the jobs not taken yet, from next on; more wakes a
	// worker when one is added or when the reading stops. A slice grows
	// with what is added: a channel of MaxFiles slots allocated 196 KB on
	// every run, a fifth of a seed-tree doctor's bytes, for one library.
	queue   []job
	next    int
	more    sync.Cond
	queued  int
	stopped bool
	// workers are the readers started so far, at most maxWorkers, and
	// idle those of them waiting for a job: a reader is started when a
	// job comes and none is idle, so a tree with one native library
	// starts one, not one per core and more (each start is a goroutine
	// scheduled on a core that then sleeps: measurable where the whole
	// run is a few milliseconds).
	workers, idle, maxWorkers int
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

// NewEarly prepares the early readers on src: they start as jobs come
// (Add), and Collect stops them.
func NewEarly(ctx context.Context, src source.Source) *Early {
	// Twice the cores: the metadata readers take the rest, and a
	// worker waiting on a cold disk leaves its core to the others.
	e := &Early{ctx: ctx, src: src, done: map[string]earlyRead{}, maxWorkers: runtime.GOMAXPROCS(0) * 2}
	e.more.L = &e.mu
	return e
}

// work is one early reader: it reads jobs until the reading stops.
func (e *Early) work() {
	for {
		j, ok := e.take1()
		if !ok || e.ctx.Err() != nil {
			return // Collect reads what is left itself
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
}

// take1 waits for the next job; false once the reading has stopped.
func (e *Early) take1() (job, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for e.next == len(e.queue) && !e.stopped {
		e.idle++
		e.more.Wait()
		e.idle--
	}
	if e.stopped {
		return job{}, false
	}
	j := e.queue[e.next]
	e.queue[e.next] = job{} // let the strings go
	e.next++
	return j, true
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
		e.queue = append(e.queue, newJob(dist, version, location, rel))
		if e.idle == 0 && e.workers < e.maxWorkers {
			e.workers++
			e.wg.Go(e.work)
		} else {
			e.more.Signal()
		}
	}
}

// stop ends the early reading: files not started yet are left to Collect.
func (e *Early) stop() {
	e.mu.Lock()
	if !e.stopped {
		e.stopped = true
		e.more.Broadcast()
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
