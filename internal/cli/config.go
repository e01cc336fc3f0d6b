package cli

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/scrim-dev/scrim/internal/tomlconf"
	"github.com/scrim-dev/scrim/internal/userdirs"
	"github.com/scrim-dev/scrim/internal/watch"
)

// config is <user config dir>/scrim/config.toml, the settings of plain
// `scrim` (the TUI). Every key is optional; a missing file is no settings.
//
//	watch = false                       # do not watch transcript folders
//	watch_dirs = ["claude:/srv/agents"] # watch these too ([AGENT:]DIR)
type config struct {
	File      string
	Watch     *bool
	WatchDirs []string
}

const maxConfigSize = 1 << 20

var configKind = tomlconf.Kind{
	Name:       "config file",
	Unreadable: "cannot read config file",
	MaxSize:    maxConfigSize,
	IfEmpty:    "add a setting such as watch = false (see README) or remove the file",
	IfBinary:   "it must be UTF-8 TOML text",
}

var configTypeErr = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

// defaultConfigFile is <user config dir>/scrim/config.toml.
func defaultConfigFile(env userdirs.Lookup) (string, error) {
	dir, err := userdirs.Config(env)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "scrim", "config.toml"), nil
}

// loadConfig reads the config file; a problem with it is a one-line
// FILE:LINE: MSG error, and scrim does not start: a setting that turns
// something off must never be ignored.
func loadConfig(env userdirs.Lookup) (*config, error) {
	path, err := defaultConfigFile(env)
	if err != nil {
		return &config{}, nil // no config folder: nothing configured
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return &config{}, nil
	}
	abs, data, err := configKind.Read(path)
	if err != nil {
		return nil, err
	}
	if err := configKind.CheckEmpty(data, path); err != nil {
		return nil, err
	}
	c, err := parseConfig(data, abs, env)
	if err != nil {
		return nil, err
	}
	c.File = abs
	return c, nil
}

func parseConfig(data []byte, file string, env userdirs.Lookup) (*config, error) {
	fail := func(line int, format string, a ...any) error {
		return &tomlconf.Error{File: file, Line: line, Msg: fmt.Sprintf(format, a...)}
	}
	if err := configKind.CheckText(data, file); err != nil {
		return nil, err
	}
	var raw struct {
		Watch     any `toml:"watch"`
		WatchDirs any `toml:"watch_dirs"`
	}
	md, err := toml.Decode(string(data), &raw)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fail(pe.Position.Line, "%s", pe.Message)
		}
		if m := configTypeErr.FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, fail(line, "%s: %s", m[2], m[3])
		}
		return nil, fail(0, "%v", err)
	}
	loc := tomlconf.Locate(data)
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0]
		return nil, fail(loc.Line(k...), "unknown key %q (the config file takes watch, watch_dirs)", k.String())
	}
	c := &config{}
	if raw.Watch != nil {
		b, ok := raw.Watch.(bool)
		if !ok {
			return nil, fail(loc.Line("watch"), "watch must be true or false, not %s", tomlValue(raw.Watch))
		}
		c.Watch = &b
	}
	if raw.WatchDirs != nil {
		list, ok := raw.WatchDirs.([]any)
		if !ok {
			return nil, fail(loc.Line("watch_dirs"), "watch_dirs must be a list of folders like [\"claude:/path\"], not %s", tomlValue(raw.WatchDirs))
		}
		for i, v := range list {
			line := loc.Line("watch_dirs", tomlconf.Elem(i))
			s, ok := v.(string)
			if !ok {
				return nil, fail(line, "watch_dirs[%d] must be a string like \"claude:/path\", not %s", i, tomlValue(v))
			}
			spec, err := configDir(s, env)
			if err != nil {
				return nil, fail(line, "watch_dirs[%d]: %v", i, err)
			}
			if _, _, err := parseWatch(spec); err != nil {
				return nil, fail(line, "watch_dirs[%d]: %v", i, err)
			}
			c.WatchDirs = append(c.WatchDirs, spec)
		}
	}
	return c, nil
}

// configDir expands a leading ~/ of a watch_dirs entry (after its AGENT:,
// if any); any other relative folder is an error, as it would depend on
// where scrim is started.
func configDir(s string, env userdirs.Lookup) (string, error) {
	agent, dir := "", s
	if a, rest, ok := strings.Cut(s, ":"); ok && agentName.MatchString(a) {
		agent, dir = a+":", rest
	}
	if dir == "~" || strings.HasPrefix(dir, "~/") {
		home, err := userdirs.Home(env)
		if err != nil {
			return "", fmt.Errorf("cannot expand ~ (%v)", err)
		}
		dir = filepath.Join(home, strings.TrimPrefix(dir, "~"))
	}
	if dir != "" && !filepath.IsAbs(dir) {
		return "", fmt.Errorf("%q is relative: give an absolute folder (or ~/…)", dir)
	}
	return agent + dir, nil
}

func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case []any:
		return "a list"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprint(v)
}

// agentName is what may stand before a colon as an agent: two letters or
// more, so that a Windows drive (C:\…) is a folder.
var agentName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]+$`)

// agentDirs lists the agents, each followed by suffix: "claude:DIR,
// codex:DIR … or opencode:DIR".
func agentDirs(suffix, sep, last string) string {
	names := slices.Sorted(maps.Keys(importerFor))
	for i := range names {
		names[i] += suffix
	}
	return strings.Join(names[:len(names)-1], sep) + last + names[len(names)-1]
}

// parseWatch reads a watched folder, [AGENT:]DIR. Without an agent, a
// folder with a .codex, .gemini, .crush or opencode folder in its path
// holds that agent's sessions; any other, Claude Code transcripts.
func parseWatch(spec string) (agent, dir string, err error) {
	dir = spec
	if a, rest, ok := strings.Cut(spec, ":"); ok && agentName.MatchString(a) {
		if _, known := importerFor[a]; !known {
			return "", "", fmt.Errorf("unknown agent %q in %q: use %s", a, spec, agentDirs(":DIR", ", ", " or "))
		}
		agent, dir = a, rest
	}
	if dir == "" {
		return "", "", fmt.Errorf("%q names no folder: use [%s]DIR", spec, agentDirs(":", "|", "|"))
	}
	if agent == "" {
		agent = "claude"
		for _, part := range strings.Split(filepath.ToSlash(filepath.Clean(dir)), "/") {
			switch part {
			case ".codex", ".gemini", ".crush", "opencode":
				agent = strings.TrimPrefix(part, ".")
			}
		}
	}
	return agent, dir, nil
}

// watchRoots are the folders plain `scrim` watches: the agents' default
// folders (~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp,
// ~/.local/share/opencode; Crush has none, its databases are in each
// project: watch_dirs = ["crush:~/src/app"]), the config file's
// watch_dirs and every --watch, unless --no-watch or `watch = false` (which
// --watch overrides) turn watching off. dirs are the folders, for display.
func (a *app) watchRoots() (roots []watch.Root, dirs []string, err error) {
	if a.noWatch && len(a.watchDirs) > 0 {
		return nil, nil, usageError("--watch and --no-watch cannot be used together")
	}
	for _, spec := range a.watchDirs {
		if _, _, err := parseWatch(spec); err != nil {
			return nil, nil, usageError("--watch: %v", err)
		}
	}
	if a.noWatch {
		return nil, nil, nil
	}
	cfg, err := loadConfig(a.lookupEnv)
	if err != nil {
		return nil, nil, err
	}
	if cfg.Watch != nil && !*cfg.Watch && len(a.watchDirs) == 0 {
		return nil, nil, nil
	}
	var specs []string
	for _, agent := range slices.Sorted(maps.Keys(importerFor)) {
		if dir, err := agentFolder(agent, a.lookupEnv); err == nil && dir != "" {
			specs = append(specs, agent+":"+dir)
		}
	}
	specs = append(append(specs, cfg.WatchDirs...), a.watchDirs...)
	seen := map[string]bool{}
	for _, spec := range specs {
		agent, dir, _ := parseWatch(spec)
		if d, err := userdirs.Expand(dir, a.lookupEnv); err == nil {
			dir = d
		}
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		if seen[agent+":"+dir] {
			continue
		}
		seen[agent+":"+dir] = true
		imp := importerFor[agent]
		r := watch.Root{Agent: agent, Dir: dir, Factory: imp.factory, Source: imp.source, Prune: imp.prune, Slow: imp.database}
		if imp.source != nil {
			r.Match = imp.match
		}
		roots = append(roots, r)
		dirs = append(dirs, dir)
	}
	return roots, dirs, nil
}
