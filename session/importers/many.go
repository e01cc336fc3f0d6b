package importers

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/scrim-dev/scrim/policy"
	"github.com/scrim-dev/scrim/session"
)

// ImportFiles imports files, transcripts of one agent, as `scrim import`
// does: it first removes what crashed imports left (once, not per file),
// then imports the files on workers goroutines side by side, each file
// still all or nothing, sharing one path resolver (a project's transcripts
// name the same files), committing small files several to a synced
// transaction (each still all or nothing), and refusing files that are not
// text. done is
// called once per file, in the order given, as soon as that file and all
// before it are done. Names that lead to the same file are imported one
// after the other, never side by side: the second finds the first's record.
func ImportFiles(st *session.Store, agent string, files []string, newParser Factory, workers int, done func(i int, res Result, err error)) error {
	return ImportFilesReading(st, agent, files, newParser, workers, nil, done)
}

// ImportFilesReading is ImportFiles that also tells read, from the workers'
// goroutines, of the bytes of file i read as they are read, a mebibyte or
// more at a time (and the rest at the file's end): a progress bar then
// moves while one long transcript is imported.
func ImportFilesReading(st *session.Store, agent string, files []string, newParser Factory, workers int, read func(i int, n int64), done func(i int, res Result, err error)) error {
	if err := st.CleanImports(); err != nil {
		return err
	}
	// One job per file, a file's names together.
	var jobs [][]int
	byFile := map[string]int{}
	for i, f := range files {
		key := f
		if abs, err := filepath.Abs(f); err == nil {
			key = abs
			if c, err := policy.Canonical(abs); err == nil {
				key = c
			}
		}
		if j, ok := byFile[key]; ok {
			jobs[j] = append(jobs[j], i)
			continue
		}
		byFile[key] = len(jobs)
		jobs = append(jobs, []int{i})
	}
	type outcome struct {
		res Result
		err error
	}
	results := make([]chan outcome, len(files))
	for i := range results {
		results[i] = make(chan outcome, 1)
	}
	queue := make(chan []int)
	go func() {
		for _, j := range jobs {
			queue <- j
		}
		close(queue)
	}()
	paths := NewPaths()
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Small files commit in groups (session.Group): their outcomes
			// wait for the group's commit.
			g := st.NewGroup()
			type waiting struct {
				i   int
				res Result
			}
			var held []waiting
			commit := func() {
				errs := g.Commit()
				for k, w := range held {
					var err error
					if errs != nil && errs[k] != nil {
						err = fmt.Errorf("import %s: %w", files[w.i], errs[k])
					}
					results[w.i] <- outcome{w.res, err}
				}
				held = held[:0]
			}
			for job := range queue {
				for n, i := range job {
					if n > 0 {
						commit() // a second name of a file must find the first's record
					}
					var readOf func(int64)
					if read != nil {
						readOf = func(n int64) { read(i, n) }
					}
					res, err := importFile(st, agent, files[i], newParser, paths, true, g, readOf)
					if err == nil && res.waiting {
						res.waiting = false
						held = append(held, waiting{i, res})
						if g.Full() {
							commit()
						}
						continue
					}
					results[i] <- outcome{res, err}
				}
			}
			commit()
		}()
	}
	for i := range files {
		o := <-results[i]
		done(i, o.res, o.err)
	}
	wg.Wait()
	return nil
}

// ImportSources imports files, sources of src's format, as `scrim import`
// does: what crashed imports left is removed first, then each file is
// imported whole (ImportSource) in turn, sharing one path resolver. done is
// called once per file, in order.
func ImportSources(st *session.Store, src Source, files []string, done func(i int, res Result, err error)) error {
	if err := st.CleanImports(); err != nil {
		return err
	}
	paths := NewPaths()
	for i, f := range files {
		res, err := ImportSource(st, src, f, paths)
		done(i, res, err)
	}
	return nil
}
