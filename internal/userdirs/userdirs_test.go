package userdirs

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// With the process's environment the folders are the os package's (but
// for a relative or ~ XDG_CONFIG_HOME, which os refuses: TestXDGValues).
func TestAsTheOSPackage(t *testing.T) {
	for _, env := range []map[string]string{
		{"HOME": "/h", "XDG_CONFIG_HOME": "/c"},
		{"HOME": "/h"},
		{},
	} {
		for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "USERPROFILE", "AppData"} {
			if v, ok := env[k]; ok {
				t.Setenv(k, v)
			} else {
				t.Setenv(k, "")
			}
		}
		home, herr := Home(OS)
		wantHome, wantHerr := os.UserHomeDir()
		if home != wantHome || (herr == nil) != (wantHerr == nil) {
			t.Errorf("%v: Home %q, %v; os %q, %v", env, home, herr, wantHome, wantHerr)
		}
		cfg, cerr := Config(OS)
		wantCfg, wantCerr := os.UserConfigDir()
		if cfg != wantCfg || (cerr == nil) != (wantCerr == nil) {
			t.Errorf("%v: Config %q, %v; os %q, %v", env, cfg, cerr, wantCfg, wantCerr)
		}
	}
}

// The folders come from the environment given, not the process's.
func TestFromTheEnvironmentGiven(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		t.Skip("XDG folders are for other systems")
	}
	t.Setenv("HOME", "/process-home")
	env := map[string]string{"HOME": "/given"}
	l := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if h, _ := Home(l); h != "/given" {
		t.Errorf("Home %q", h)
	}
	if c, _ := Config(l); c != filepath.Join("/given", ".config") {
		t.Errorf("Config %q", c)
	}
	if d, _ := Data(l); d != filepath.Join("/given", ".local", "share") {
		t.Errorf("Data %q", d)
	}
	env["XDG_DATA_HOME"] = "/data"
	if d, _ := Data(l); d != "/data" {
		t.Errorf("Data with XDG_DATA_HOME %q", d)
	}
	delete(env, "HOME")
	delete(env, "XDG_DATA_HOME")
	if d, err := Data(l); err == nil {
		t.Errorf("Data without HOME: %q, no error", d)
	}
}

func TestExpand(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("HOME is USERPROFILE there")
	}
	env := map[string]string{"HOME": "/given"}
	l := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for in, want := range map[string]string{
		"~":         "/given",
		"~/":        "/given",
		"~/a/b":     "/given/a/b",
		"~user/a":   "~user/a",
		"a/~/b":     "a/~/b",
		"./~":       "./~",
		"/abs/path": "/abs/path",
		"":          "",
	} {
		if got, err := Expand(in, l); err != nil || got != want {
			t.Errorf("Expand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	delete(env, "HOME")
	if got, err := Expand("~/a", l); err == nil {
		t.Errorf("Expand without HOME: %q, no error", got)
	}
	if got, err := Expand("/a", l); err != nil || got != "/a" {
		t.Errorf("Expand(/a) without HOME: %q, %v", got, err)
	}
}

// An XDG variable with a leading ~ is the home folder's; a relative one is
// ignored, as the XDG specification says, for the usual folder.
func TestXDGValues(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		t.Skip("XDG folders are for other systems")
	}
	env := map[string]string{"HOME": "/given", "XDG_CONFIG_HOME": "~/cfg", "XDG_DATA_HOME": "~/data"}
	l := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if c, err := Config(l); err != nil || c != "/given/cfg" {
		t.Errorf("Config with XDG_CONFIG_HOME=~/cfg: %q, %v", c, err)
	}
	if d, err := Data(l); err != nil || d != "/given/data" {
		t.Errorf("Data with XDG_DATA_HOME=~/data: %q, %v", d, err)
	}
	env["XDG_CONFIG_HOME"], env["XDG_DATA_HOME"] = "relative/cfg", "./data"
	if c, err := Config(l); err != nil || c != "/given/.config" {
		t.Errorf("Config with a relative XDG_CONFIG_HOME: %q, %v; want the usual folder", c, err)
	}
	if d, err := Data(l); err != nil || d != "/given/.local/share" {
		t.Errorf("Data with a relative XDG_DATA_HOME: %q, %v; want the usual folder", d, err)
	}
}
