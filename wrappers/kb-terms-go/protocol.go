// The protocol side of kb-terms-go (protocol/SPEC.md): decoding and validating a request, rendering
// CNL, the one-shot and worker (framed) loops, and the stderr error line. Standard library only.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

const pluginID = "kb-terms-go"

var allOps = map[string]bool{
	"detectSeeds": true, "normalizePersistentContext": true, "buildPlan": true, "recordOutcome": true,
	"retrieve": true, "onSourceText": true, "onSessionEvent": true, "solve": true, "validate": true,
}

// ContextItem is a knowledge unit flattened for reading (SPEC.md §5).
type ContextItem struct {
	Title      string `json:"title"`
	SourceLink string `json:"sourceLink"`
	Text       string `json:"text"`
}

// Unit is the JSON form of a Context Unit (SPEC.md §6.3), with the fields this plugin uses.
type Unit struct {
	ID         string  `json:"id"`
	SourceID   string  `json:"sourceId"`
	ChunkID    string  `json:"chunkId"`
	KUType     string  `json:"kuType"`
	Role       string  `json:"role"`
	Topic      string  `json:"topic"`
	Claim      *string `json:"claim,omitempty"`
	Procedure  *string `json:"procedure,omitempty"`
	Title      *string `json:"title,omitempty"`
	SourceName *string `json:"sourceName,omitempty"`
}

// Intent is one Intent Group (the fields retrieve needs).
type Intent struct {
	Index  int    `json:"index"`
	Act    string `json:"act"`
	Intent string `json:"intent"`
}

type Budget struct {
	LLMCalls   int `json:"llmCalls"`
	DeadlineMs int `json:"deadlineMs"`
}

type Paths struct {
	Artifacts *string `json:"artifacts"`
}

// Request is the envelope; Payload stays raw until the op is known.
type Request struct {
	Prompt    string
	Context   []ContextItem
	Op        string
	Payload   json.RawMessage
	Budget    Budget
	Paths     Paths
	RequestID string
	ID        string // worker mode: echoed as `Request:`; "" when absent
}

// protocolError is an invalid request (exit 2 / Status: error) or a processing failure (exit 1).
type protocolError struct {
	Code    string
	Message string
	Exit    int
}

func (e *protocolError) Error() string { return e.Code + ": " + e.Message }

func invalid(format string, args ...any) *protocolError {
	return &protocolError{"SCHEMA_VIOLATION", fmt.Sprintf(format, args...), 2}
}

// field decodes one optional envelope field into out; a wrong type is a schema violation.
func field(raw map[string]json.RawMessage, name string, out any) error {
	value, ok := raw[name]
	if !ok || string(value) == "null" {
		return nil
	}
	if err := json.Unmarshal(value, out); err != nil {
		return invalid("request: `%s`: %v", name, err)
	}
	return nil
}

// decodeRequest validates what this plugin reads: prompt, context, protocolVersion, op, payload (per op,
// in handlers), budget, paths and the ids (its manifest says `reads`); unknown fields are ignored.
func decodeRequest(body []byte) (*Request, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) || errors.Is(err, io.ErrUnexpectedEOF) || !json.Valid(body) {
			return nil, &protocolError{"INVALID_JSON", "request is not valid JSON: " + err.Error(), 2}
		}
		return nil, invalid("request: expected a JSON object")
	}
	if raw == nil {
		return nil, invalid("request: expected a JSON object, got null")
	}
	req := &Request{Payload: json.RawMessage("{}")}
	for _, name := range []string{"prompt", "context"} {
		if value, ok := raw[name]; !ok || string(value) == "null" {
			return nil, invalid("request: object is missing required field `%s`", name)
		}
	}
	if err := field(raw, "prompt", &req.Prompt); err != nil {
		return nil, err
	}
	if err := field(raw, "context", &req.Context); err != nil {
		return nil, err
	}
	if value, ok := raw["protocolVersion"]; ok && string(value) != "1" {
		return nil, invalid("request: protocolVersion must be 1, got %s", value)
	}
	if err := field(raw, "op", &req.Op); err != nil {
		return nil, err
	}
	if req.Op != "" && !allOps[req.Op] {
		return nil, invalid("request: unknown op %q", req.Op)
	}
	if value, ok := raw["payload"]; ok && string(value) != "null" {
		if len(bytes.TrimSpace(value)) == 0 || bytes.TrimSpace(value)[0] != '{' {
			return nil, invalid("request: `payload` must be an object or null")
		}
		req.Payload = value
	}
	req.Budget = Budget{DeadlineMs: 15000}
	if err := field(raw, "budget", &req.Budget); err != nil {
		return nil, err
	}
	if err := field(raw, "paths", &req.Paths); err != nil {
		return nil, err
	}
	var ids struct{ frame, session string }
	for name, out := range map[string]*string{"requestId": &req.RequestID, "frameId": &ids.frame, "sessionId": &ids.session} {
		if err := field(raw, name, out); err != nil {
			return nil, err
		}
	}
	if value, ok := raw["id"]; ok && string(value) != "null" {
		var number json.Number
		decoder := json.NewDecoder(bytes.NewReader(value))
		decoder.UseNumber()
		if err := decoder.Decode(&req.ID); err != nil {
			if json.Unmarshal(value, &number) != nil {
				return nil, invalid("request: `id` must be a string or an integer")
			}
			if _, err := strconv.ParseInt(number.String(), 10, 64); err != nil {
				return nil, invalid("request: `id` must be a string or an integer")
			}
			req.ID = number.String()
		}
	}
	return req, nil
}

// decodePayload decodes the op's payload strictly by type (a wrong type is a schema violation).
func decodePayload(req *Request, out any) error {
	if err := json.Unmarshal(req.Payload, out); err != nil {
		return invalid("payload of %s: %v", req.Op, err)
	}
	return nil
}

// ---------------------------------------------------------------------------- CNL output

// Doc builds one CNL document: sections of `Field: value` lines (SPEC.md §6.1).
type Doc struct{ b strings.Builder }

func (d *Doc) Section(heading string) {
	if d.b.Len() > 0 {
		d.b.WriteString("\n")
	}
	d.b.WriteString("## " + heading + "\n")
}

// Field writes `Name: value`; a multi-line value continues on lines indented by two spaces.
func (d *Doc) Field(name, value string) {
	value = strings.TrimSpace(value)
	if value == "" {
		return
	}
	lines := strings.Split(value, "\n")
	d.b.WriteString(name + ": " + strings.TrimSpace(lines[0]) + "\n")
	for _, line := range lines[1:] {
		d.b.WriteString("  " + strings.TrimRight(line, " \r") + "\n")
	}
}

func (d *Doc) String() string { return d.b.String() }

// result starts a document with the result block.
func result(status, confidence, summary, requestID string) *Doc {
	d := &Doc{}
	d.Section("Plugin Result")
	d.Field("Status", status)
	d.Field("Plugin", pluginID)
	d.Field("Confidence", confidence)
	d.Field("Result", summary)
	d.Field("LLMCalls", "0")
	d.Field("Request", requestID)
	return d
}

// ---------------------------------------------------------------------------- the two modes

// answer turns one request body into a CNL document, or an error.
func answer(body []byte) (string, error) {
	req, err := decodeRequest(body)
	if err != nil {
		return "", err
	}
	return handle(req)
}

func errorLine(err error) ([]byte, int) {
	var perr *protocolError
	if !errors.As(err, &perr) {
		perr = &protocolError{"INTERNAL_ERROR", err.Error(), 1}
	}
	line, _ := json.Marshal(map[string]any{"code": perr.Code, "message": perr.Message, "details": map[string]any{}})
	return append(line, '\n'), perr.Exit
}

func oneShot() {
	body, err := io.ReadAll(os.Stdin)
	if err == nil {
		var out string
		out, err = answer(body)
		if err == nil {
			os.Stdout.WriteString(out)
			return
		}
	}
	line, code := errorLine(err)
	os.Stderr.Write(line)
	os.Exit(code)
}

// readFrame reads `Content-Length: N\r\n\r\n` + N bytes; io.EOF at a clean end between frames.
func readFrame(in *bufio.Reader) ([]byte, error) {
	length := -1
	for first := true; ; first = false {
		line, err := in.ReadString('\n')
		if err != nil {
			if first && line == "" && err == io.EOF {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("frame header cut short: %v", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("bad frame header line %q", line)
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("bad Content-Length %q", value)
			}
			length = n
		}
	}
	if length < 0 {
		return nil, errors.New("frame without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(in, body); err != nil {
		return nil, fmt.Errorf("frame body cut short: %v", err)
	}
	return body, nil
}

// requestID digs the `id` out of a request that failed validation, so its error answer can carry it.
func requestID(body []byte) string {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &probe) != nil || len(probe.ID) == 0 || string(probe.ID) == "null" {
		return ""
	}
	var text string
	if json.Unmarshal(probe.ID, &text) == nil {
		return text
	}
	return string(probe.ID)
}

func worker() {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for {
		body, err := readFrame(in)
		if err == io.EOF {
			return
		}
		if err != nil {
			line, _ := json.Marshal(map[string]string{"code": "FRAMING_ERROR", "message": err.Error()})
			os.Stderr.Write(append(line, '\n'))
			os.Exit(2)
		}
		text, err := answer(body)
		if err != nil {
			var perr *protocolError
			code := "INTERNAL_ERROR"
			if errors.As(err, &perr) {
				code = perr.Code
			}
			doc := result("error", "", err.Error(), requestID(body))
			doc.Field("Code", code)
			text = doc.String()
		}
		fmt.Fprintf(out, "Content-Length: %d\r\n\r\n%s", len(text), text)
		if err := out.Flush(); err != nil {
			os.Exit(1)
		}
	}
}

func main() {
	if os.Getenv("MRPVM_WORKER") == "1" {
		worker()
		return
	}
	oneShot()
}
