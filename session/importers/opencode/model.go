package opencode

import (
	"encoding/json"
	"errors"
)

// info is a session's info, as all three containers hold it.
type info struct {
	ID        string `json:"id"`
	ParentID  string `json:"parentID"`
	Title     string `json:"title"`
	Directory string `json:"directory"`
	Time      struct {
		Created int64 `json:"created"`
	} `json:"time"`
}

// message is a message's info and its parts.
type message struct {
	ID         string `json:"id"`
	SessionID  string `json:"sessionID"`
	Role       string `json:"role"`
	ModelID    string `json:"modelID"`
	ProviderID string `json:"providerID"`
	// User messages name the model they were sent to.
	Model *struct {
		ModelID    string `json:"modelID"`
		ProviderID string `json:"providerID"`
	} `json:"model"`
	Path *struct {
		Cwd string `json:"cwd"`
	} `json:"path"`
	Time struct {
		Created int64 `json:"created"`
	} `json:"time"`
	parts []part
}

// part is a message part: text, file, tool, and kinds of bookkeeping.
type part struct {
	ID        string `json:"id"`
	MessageID string `json:"messageID"`
	Type      string `json:"type"`
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
	Tool      string `json:"tool"`
	CallID    string `json:"callID"`
	State     *state `json:"state"`
	// file parts
	Mime     string `json:"mime"`
	Filename string `json:"filename"`
	URL      string `json:"url"`
}

type state struct {
	Status   string          `json:"status"`
	Input    json.RawMessage `json:"input"`
	Output   string          `json:"output"`
	Error    string          `json:"error"`
	Metadata json.RawMessage `json:"metadata"`
}

// conversation is one session read from any container.
type conversation struct {
	info info
	msgs []message
}

// decode decodes raw into v; a field of an unexpected type is left out (and
// the rest decoded), only a syntax error makes raw unreadable.
func decode(raw []byte, v any) bool {
	err := json.Unmarshal(raw, v)
	var ute *json.UnmarshalTypeError
	return err == nil || errors.As(err, &ute)
}
