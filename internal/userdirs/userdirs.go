// Package userdirs finds the user's home, config and data folders as the os
// package does, but from an environment passed in rather than the process's:
// scrim's CLI takes its environment as a value (so that tests run side by
// side), and every folder it derives from HOME or XDG_* must come from that.
package userdirs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Lookup reads an environment variable, as os.LookupEnv does.
type Lookup func(string) (string, bool)

// OS is the process's own environment.
var OS Lookup = os.LookupEnv

func (l Lookup) get(k string) string {
	v, _ := l(k)
	return v
}

// Home is os.UserHomeDir read from l.
func Home(l Lookup) (string, error) {
	k := "HOME"
	switch runtime.GOOS {
	case "windows":
		k = "USERPROFILE"
	case "plan9":
		k = "home"
	}
	if v := l.get(k); v != "" {
		return v, nil
	}
	switch runtime.GOOS {
	case "android":
		return "/sdcard", nil
	case "ios":
		return "/", nil
	}
	return "", errors.New("$" + k + " is not defined")
}

// Config is os.UserConfigDir read from l.
func Config(l Lookup) (string, error) {
	switch runtime.GOOS {
	case "windows":
		if v := l.get("AppData"); v != "" {
			return v, nil
		}
		return "", errors.New("%AppData% is not defined")
	case "darwin", "ios":
		home, err := Home(l)
		if err != nil {
			return "", err
		}
		return filepath.Join(home, "Library", "Application Support"), nil
	case "plan9":
		home, err := Home(l)
		if err != nil {
			return "", err
		}
		return filepath.Join(home, "lib"), nil
	}
	if v, ok := Folder(l, "XDG_CONFIG_HOME"); ok {
		return v, nil
	}
	home, err := Home(l)
	if err != nil {
		return "", errors.New("neither $XDG_CONFIG_HOME nor $HOME are defined")
	}
	return filepath.Join(home, ".config"), nil
}

// Data is where a program keeps its data: $XDG_DATA_HOME, else
// ~/.local/share; the config folder on macOS (~/Library/Application Support)
// and %LocalAppData% on Windows.
func Data(l Lookup) (string, error) {
	switch runtime.GOOS {
	case "windows":
		if v := l.get("LocalAppData"); v != "" {
			return v, nil
		}
		return Config(l)
	case "darwin", "ios":
		return Config(l)
	}
	if v, ok := Folder(l, "XDG_DATA_HOME"); ok {
		return v, nil
	}
	home, err := Home(l)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "share"), nil
}

// Folder reads variable k as a folder (XDG_CONFIG_HOME, an agent's
// CODEX_HOME): its value with a leading ~ expanded (XDG_CONFIG_HOME=
// "~/.config", quoted in a profile, reaches scrim as it is); false when it
// is unset or relative, which the XDG specification says to ignore. Taken
// as it was, a relative XDG_DATA_HOME put the store in a folder under the
// current one, a new one wherever scrim ran, and a relative
// XDG_CONFIG_HOME left the user's policy file unread for the built-in one.
func Folder(l Lookup, k string) (string, bool) {
	v := l.get(k)
	if v == "" {
		return "", false
	}
	if e, err := Expand(v, l); err == nil {
		v = e
	}
	return v, filepath.IsAbs(v)
}

// Expand replaces a leading ~ or ~/ of path with the home folder read from
// l, as a shell would have: a path given as --store=~/x, or quoted, or in
// a variable, reaches scrim as it is, and taken literally it names a
// folder "~" in the current one. Any other path is returned as it is
// (~user is not expanded).
func Expand(path string, l Lookup) (string, error) {
	if path != "~" && !strings.HasPrefix(path, "~/") && !(runtime.GOOS == "windows" && strings.HasPrefix(path, `~\`)) {
		return path, nil
	}
	home, err := Home(l)
	if err != nil {
		return "", fmt.Errorf("cannot expand ~ in %s (%v)", path, err)
	}
	return filepath.Join(home, path[1:]), nil
}
