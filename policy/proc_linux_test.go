package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file deleted while it is held open is still readable through
// /proc/self/fd/N, whose link reads "…/.env (deleted)": no deny pattern
// matches that, so it must not be decidable at all — denied for every
// tier, through every /proc road to it. Pipes are not files either.
func TestProcLinksToDeletedFilesAreDenied(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	env := filepath.Join(dir, ".env")
	if err := os.WriteFile(env, []byte("TOKEN=x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(env)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Remove(env); err != nil {
		t.Fatal(err)
	}
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	p, err := Parse([]byte("default_tier = \"all\"\n[tiers.all]\nlabel = \"all\"\nread = [\"/**\"]\ndeny = [\"**/.env\"]\n"), filepath.Join(dir, "p.toml"))
	if err != nil {
		t.Fatal(err)
	}
	tier := p.Tiers["all"]
	for _, path := range []string{
		fmt.Sprintf("/proc/self/fd/%d", f.Fd()),
		fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), f.Fd()),
		fmt.Sprintf("/dev/fd/%d", f.Fd()),
		fmt.Sprintf("/proc/thread-self/fd/%d", f.Fd()),
		fmt.Sprintf("/proc/self/fd/%d", r.Fd()),
	} {
		if _, err := Canonical(path); err == nil {
			t.Errorf("Canonical(%s) resolved", path)
		}
		if d := p.Decide(tier, path); d.Allowed {
			t.Errorf("%s is allowed: %s", path, d.Reason)
		}
		if d := p.NewBatch(tier).Decide(path); d.Allowed {
			t.Errorf("%s is allowed in a batch: %s", path, d.Reason)
		}
	}
	// A live file through the same road still resolves, to itself.
	live := filepath.Join(dir, "live.txt")
	os.WriteFile(live, []byte("x"), 0o644)
	g, _ := os.Open(live)
	defer g.Close()
	if c, err := Canonical(fmt.Sprintf("/proc/self/fd/%d", g.Fd())); err != nil || c != live {
		t.Errorf("a live file through /proc: %q, %v", c, err)
	}
	// /proc/self/cwd and root are folders, not deleted: they resolve.
	if c, err := Canonical("/proc/self/root/etc"); err != nil || c != "/etc" {
		t.Errorf("/proc/self/root/etc: %q, %v", c, err)
	}
}

// The walk (where the kernel's one open cannot answer) follows /proc's own
// links as the kernel does: self and thread-self lead to the process's
// folder (their targets, "1234" and "1234/task/1235", are relative), and
// mounts to self/mounts.
func TestProcSelfByTheWalk(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	file := filepath.Join(dir, "key.txt")
	if err := os.WriteFile(file, []byte("k"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"/proc/self/root" + file,
		"/proc/thread-self/root" + file,
	} {
		links := 0
		got, err := resolve(path, &links)
		if err != nil || got != file {
			t.Errorf("walk of %s = %q, %v; want %s", path, got, err, file)
		}
	}
	// Past self, the walk refuses what the kernel's open does: a deleted
	// file held open, a pipe.
	gone := filepath.Join(dir, ".env")
	os.WriteFile(gone, []byte("TOKEN=x\n"), 0o644)
	f, err := os.Open(gone)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	os.Remove(gone)
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	for _, path := range []string{
		fmt.Sprintf("/proc/self/fd/%d", f.Fd()),
		fmt.Sprintf("/proc/thread-self/fd/%d", f.Fd()),
		fmt.Sprintf("/proc/self/fd/%d", r.Fd()),
	} {
		links := 0
		if got, err := resolve(path, &links); err == nil {
			t.Errorf("walk of %s resolved to %q", path, got)
		}
	}
	wd, _ := os.Getwd()
	wd, _ = filepath.EvalSymlinks(wd)
	links := 0
	if got, err := resolve("/proc/self/cwd", &links); err != nil || got != wd {
		t.Errorf("walk of /proc/self/cwd = %q, %v; want %s", got, err, wd)
	}
	if got, err := resolve("/proc/mounts", &links); err != nil || !strings.HasPrefix(got, "/proc/") || !strings.HasSuffix(got, "/mounts") {
		t.Errorf("walk of /proc/mounts = %q, %v", got, err)
	}
}
