package tomlconf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var testKind = Kind{
	Name:       "test file",
	Unreadable: "cannot read test file",
	MaxSize:    1 << 20,
	IfEmpty:    "add something",
	IfBinary:   "it must be text",
}

func TestErrorForms(t *testing.T) {
	for e, want := range map[*Error]string{
		{File: "p.toml", Line: 3, Msg: "bad"}: "p.toml:3: bad",
		{File: "p.toml", Msg: "unreadable"}:   "p.toml: unreadable",
	} {
		if got := e.Error(); got != want {
			t.Errorf("Error() = %q, want %q", got, want)
		}
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.toml")
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(good, []byte("a = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, make([]byte, testKind.MaxSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	abs, data, err := testKind.Read(good)
	if err != nil || abs != good || string(data) != "a = 1\n" {
		t.Fatalf("Read(good) = %q, %q, %v", abs, data, err)
	}
	missing := filepath.Join(dir, "missing.toml")
	for path, want := range map[string]string{
		missing: missing + ": cannot read test file: no such file or directory",
		dir:     dir + ": cannot read test file: is a directory",
		big:     big + ": test file is larger than 1 MiB; is this the right file?",
	} {
		_, data, err := testKind.Read(path)
		var e *Error
		if data != nil || !errors.As(err, &e) || e.Line != 0 || err.Error() != want {
			t.Errorf("Read(%s) = %v; want %q on line 0", path, err, want)
		}
	}
}

func TestChecks(t *testing.T) {
	tests := []struct {
		name, text string
		line       int // 0: no error
		want       string
	}{
		{"text", "a = 1\nb = 'café'\n", 0, ""},
		{"empty", "", 1, "test file is empty; add something"},
		{"blank", "\n \t\r\n", 1, "test file is empty; add something"},
		{"NUL", "a = 1\n\nb = \"\x00\"\n", 3, "test file looks binary (NUL byte); it must be text: is this the right file?"},
		{"NUL before bad UTF-8", "\xff\n\x00", 2, "looks binary"},
		{"not UTF-8", "a = 1\nb = 'caf\xe9'\n", 2, "test file is not valid UTF-8 text; save it as UTF-8"},
		{"U+FFFD itself is fine", "a = '\uFFFD'\n", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := testKind.CheckEmpty([]byte(tc.text), "f.toml")
			if err == nil {
				err = testKind.CheckText([]byte(tc.text), "f.toml")
			}
			var e *Error
			switch {
			case tc.line == 0 && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.line == 0:
			case !errors.As(err, &e) || e.File != "f.toml" || e.Line != tc.line || !strings.Contains(e.Msg, tc.want):
				t.Fatalf("error %v, want line %d and %q", err, tc.line, tc.want)
			}
		})
	}
	// Emptiness is its own check: a file held in memory may be empty.
	if err := testKind.CheckText(nil, "f.toml"); err != nil {
		t.Fatalf("CheckText(empty) = %v", err)
	}
}
