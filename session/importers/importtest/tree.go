package importtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// TreeOptions shape a generated ~/.claude/projects.
type TreeOptions struct {
	Projects int     // project folders (default 40)
	Files    int     // transcripts in all (default 1,500)
	Median   int64   // median transcript size (default 150 KB)
	Sigma    float64 // spread of the log-normal sizes (default 1.2)
	Big      int     // transcripts of 5–20 MB (default 12)
	Seed     uint64
}

// TreeFile is one generated transcript.
type TreeFile struct {
	Path     string
	Size     int64
	Messages int // what an import makes of it
	Array    bool
}

// WriteClaudeTree writes a tree of Claude Code transcripts below root the
// way a real ~/.claude/projects looks: project folders named after their
// working folder, each with its sessions' transcripts, sizes log-normal
// (most small, a dozen of 5–20 MB), half of them with array-form tool
// results. With the defaults it is about 600 MB.
func WriteClaudeTree(root string, o TreeOptions) ([]TreeFile, error) {
	if o.Projects == 0 {
		o.Projects = 40
	}
	if o.Files == 0 {
		o.Files = 1500
	}
	if o.Median == 0 {
		o.Median = 150_000
	}
	if o.Sigma == 0 {
		o.Sigma = 1.2
	}
	if o.Big == 0 && o.Files >= 100 {
		o.Big = 12
	}
	r := rand.New(rand.NewPCG(o.Seed, 0x5c12))
	var out []TreeFile
	for i := range o.Files {
		proj := i % o.Projects
		cwd := fmt.Sprintf("/home/dev/proj%02d", proj)
		dir := filepath.Join(root, fmt.Sprintf("-home-dev-proj%02d", proj))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		var size int64
		if i < o.Big {
			size = 5<<20 + r.Int64N(15<<20)
		} else {
			size = int64(float64(o.Median) * math.Exp(o.Sigma*r.NormFloat64()))
			size = min(max(size, 4<<10), 5<<20)
		}
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, r.Uint64()&0xffffffffffff)
		tf := TreeFile{Path: filepath.Join(dir, id+".jsonl"), Array: i%2 == 1}
		f, err := os.Create(tf.Path)
		if err != nil {
			return nil, err
		}
		tf.Messages, err = WriteClaude(f, size, ClaudeOptions{ArrayResults: tf.Array, SessionID: id, Cwd: cwd})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(tf.Path)
		if err != nil {
			return nil, err
		}
		tf.Size = fi.Size()
		out = append(out, tf)
	}
	return out, nil
}

// AppendClaudeTurn appends one more turn to a transcript WriteClaudeTree
// wrote, as Claude Code appends to a live session, and returns the messages
// an import makes of it.
func AppendClaudeTurn(tf TreeFile, turn int) (int, error) {
	f, err := os.OpenFile(tf.Path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	id := filepath.Base(tf.Path)
	id = id[:len(id)-len(".jsonl")]
	proj := filepath.Base(filepath.Dir(tf.Path))
	n, err := WriteClaude(f, 1, ClaudeOptions{ArrayResults: tf.Array, SessionID: id, Cwd: "/home/dev/" + proj[len("-home-dev-"):], FirstTurn: turn})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}
