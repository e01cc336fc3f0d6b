package session

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	text := func(s, path string) Part { return Part{Kind: PartText, Text: s, SourcePath: path} }
	tests := []struct {
		name    string
		msg     Message
		wantErr string // "" = valid
	}{
		{"no sourcePaths", Message{Role: RoleTool, Parts: []Part{text("out", "")}}, ""},
		{"attributed, matching", Message{Role: RoleTool, Parts: []Part{text("a", "/a"), text("b", "/b")},
			Meta: Meta{SourcePaths: []string{"/a", "/b"}}}, ""},
		{"attributed, duplicates collapse in order", Message{Role: RoleTool,
			Parts: []Part{text("b1", "/b"), text("x", ""), text("a", "/a"), text("b2", "/b")},
			Meta:  Meta{SourcePaths: []string{"/b", "/a"}}}, ""},
		{"whole-message attribution", Message{Role: RoleTool, Parts: []Part{text("both files", "")},
			Meta: Meta{SourcePaths: []string{"/a", "/b"}}}, ""},
		{"whole-message, no parts", Message{Role: RoleUser, Meta: Meta{SourcePaths: []string{"/a"}}}, ""},
		{"tool call with input", Message{Role: RoleAssistant, Parts: []Part{
			{Kind: PartToolCall, CallID: "c1", Name: "read", Input: json.RawMessage(`{"path":"/a"}`)}}}, ""},
		{"event", Message{Role: RoleEvent, Parts: []Part{text("switched", "")}}, ""},
		{"unknown role", Message{Role: "robot"}, "role"},
		{"empty role", Message{}, "role"},
		{"empty non-nil sourcePaths", Message{Role: RoleTool, Meta: Meta{SourcePaths: []string{}}}, "present but empty"},
		{"relative path", Message{Role: RoleTool, Meta: Meta{SourcePaths: []string{"src/a.go"}}}, "absolute, clean"},
		{"empty path", Message{Role: RoleTool, Meta: Meta{SourcePaths: []string{""}}}, "absolute, clean"},
		{"unclean path", Message{Role: RoleTool, Meta: Meta{SourcePaths: []string{"/a/../etc/passwd"}}}, "absolute, clean"},
		{"trailing slash", Message{Role: RoleTool, Meta: Meta{SourcePaths: []string{"/a/"}}}, "absolute, clean"},
		{"duplicate path", Message{Role: RoleTool, Meta: Meta{SourcePaths: []string{"/a", "/a"}}}, "listed twice"},
		{"attributed but sourcePaths nil", Message{Role: RoleTool, Parts: []Part{text("a", "/a")}}, "do not start with"},
		{"attributed, path missing", Message{Role: RoleTool, Parts: []Part{text("a", "/a"), text("b", "/b")},
			Meta: Meta{SourcePaths: []string{"/a"}}}, "do not start with"},
		{"attributed, and as a whole to another path", Message{Role: RoleTool, Parts: []Part{text("a", "/a")},
			Meta: Meta{SourcePaths: []string{"/a", "/b"}}}, ""},
		{"attributed, a whole-message path among the parts' paths", Message{Role: RoleTool, Parts: []Part{text("a", "/a"), text("b", "/b")},
			Meta: Meta{SourcePaths: []string{"/a", "/c", "/b"}}}, "do not start with"},
		{"attributed, wrong order", Message{Role: RoleTool, Parts: []Part{text("a", "/a"), text("b", "/b")},
			Meta: Meta{SourcePaths: []string{"/b", "/a"}}}, "do not start with"},
		{"a Windows path as recorded", Message{Role: RoleTool, Meta: Meta{SourcePaths: []string{"C:/Users/me/.env"}}}, ""},
		{"a Windows path not as recorded", Message{Role: RoleTool, Meta: Meta{SourcePaths: []string{`c:\Users\me\.env`}}}, "absolute, clean"},
		{"attributed part relative", Message{Role: RoleTool, Parts: []Part{text("a", "a")},
			Meta: Meta{SourcePaths: []string{"a"}}}, "absolute, clean"},
		{"tool call that writes a file", Message{Role: RoleAssistant, Parts: []Part{{Kind: PartToolCall, SourcePath: "/a"}},
			Meta: Meta{SourcePaths: []string{"/a"}}}, ""},
		{"tool call that writes a file, sourcePaths nil", Message{Role: RoleAssistant, Parts: []Part{{Kind: PartToolCall, SourcePath: "/a"}}}, "do not start with"},
		{"unknown part kind", Message{Role: RoleUser, Parts: []Part{{Kind: "image"}}}, "kind"},
		{"tool input not JSON", Message{Role: RoleAssistant, Parts: []Part{{Kind: PartToolCall, Name: "read", Input: json.RawMessage(`{"path":`)}}}, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.msg.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Validate: %v, want valid", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("Validate: valid, want error containing %q", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("Validate: %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestSyncSourcePaths(t *testing.T) {
	tests := []struct {
		name  string
		parts []Part
		start []string
		want  []string
	}{
		{"no parts attributed keeps nil", []Part{{Kind: PartText, Text: "x"}}, nil, nil},
		{"whole-message attribution kept", []Part{{Kind: PartText, Text: "x"}}, []string{"/a", "/b"}, []string{"/a", "/b"}},
		{"ordered and de-duplicated", []Part{
			{Kind: PartToolResult, SourcePath: "/c"}, {Kind: PartToolResult, SourcePath: "/a"},
			{Kind: PartText}, {Kind: PartToolResult, SourcePath: "/c"}}, nil, []string{"/c", "/a"}},
		{"stale list replaced", []Part{{Kind: PartText, SourcePath: "/new"}}, []string{"/old"}, []string{"/new"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Message{Role: RoleTool, Parts: tt.parts, Meta: Meta{SourcePaths: tt.start}}
			m.SyncSourcePaths()
			if !reflect.DeepEqual(m.Meta.SourcePaths, tt.want) {
				t.Fatalf("SourcePaths = %#v, want %#v", m.Meta.SourcePaths, tt.want)
			}
			if err := m.Validate(); err != nil {
				t.Fatalf("synced message does not validate: %v", err)
			}
		})
	}
}

// The JSON shape is the storage format: absent sourcePaths is omitted, and a
// record written before the field existed decodes to nil.
func TestSourcePathsJSON(t *testing.T) {
	b, err := json.Marshal(Message{Role: RoleTool, Parts: []Part{{Kind: PartText, Text: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "sourcePaths") {
		t.Fatalf("absent sourcePaths encoded: %s", b)
	}
	b, err = json.Marshal(Message{Role: RoleTool, Meta: Meta{SourcePaths: []string{"/a"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"meta":{"sourcePaths":["/a"]}`) {
		t.Fatalf("sourcePaths not camelCase under meta: %s", b)
	}
	for _, old := range []string{
		`{"id":"x","role":"tool","parts":[{"kind":"text","text":"hi"}]}`,
		`{"id":"x","role":"tool","parts":[],"meta":{}}`,
	} {
		var m Message
		if err := json.Unmarshal([]byte(old), &m); err != nil {
			t.Fatal(err)
		}
		if m.Meta.SourcePaths != nil {
			t.Fatalf("%s: SourcePaths = %#v, want nil", old, m.Meta.SourcePaths)
		}
	}
}

// Paths a message is attributed to as a whole follow its parts' paths, once.
func TestSyncSourcePathsWhole(t *testing.T) {
	m := Message{Role: RoleTool, Parts: []Part{{Kind: PartToolResult, Text: "x", SourcePath: "/ws/x"}}}
	m.SyncSourcePaths("/ws/secrets/x", "/ws/x", "")
	if want := []string{"/ws/x", "/ws/secrets/x"}; !reflect.DeepEqual(m.Meta.SourcePaths, want) {
		t.Fatalf("SourcePaths = %q, want %q", m.Meta.SourcePaths, want)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	w := Message{Role: RoleTool, Parts: []Part{{Kind: PartToolResult, Text: "x"}}}
	w.SyncSourcePaths("/a", "/b")
	if want := []string{"/a", "/b"}; !reflect.DeepEqual(w.Meta.SourcePaths, want) {
		t.Fatalf("whole-message SourcePaths = %q, want %q", w.Meta.SourcePaths, want)
	}
}
