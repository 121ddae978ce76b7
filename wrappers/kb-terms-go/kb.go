// kb-terms-go: a kb-plugin in Go (standard library only). It keeps one index file per source in its
// artifacts folder (onSourceText) and, for each intent, selects the units that share the most
// informative terms with it (retrieve), from that index, the request's inline units, or — with
// neither — the context items.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

var roles = map[string]bool{"Comparison": true, "Explanation": true, "Procedure": true, "Definition": true,
	"Evaluation": true, "Diagnostic": true, "Constraint": true, "Narrative": true, "Description": true}
var kuTypes = map[string]bool{"atomic": true, "composite": true, "aggregate": true}
var kbOps = map[string]bool{"retrieve": true, "onSourceText": true, "onSessionEvent": true}

var wordRe = regexp.MustCompile(`[\pL\pN]+`)
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields("the a an and or of to in on for is are was were be been it its this that " +
		"with as at by from what which who whom how why when where do does did can could should would " +
		"i you we they he she my your our their me us them not no yes if then than so but into about") {
		stopwords[w] = true
	}
}

func terms(text string) []string {
	var out []string
	for _, w := range wordRe.FindAllString(strings.ToLower(text), -1) {
		if len(w) > 1 && !stopwords[w] {
			out = append(out, w)
		}
	}
	return out
}

func handle(req *Request) (string, error) {
	op := req.Op
	if op == "" {
		op = "retrieve"
		req.Op = op
	}
	if !kbOps[op] { // an op of another plugin type: not an error, just not ours
		return result("unsupported", "", pluginID+" does not implement "+op, req.ID).String(), nil
	}
	switch op {
	case "onSourceText":
		return onSourceText(req)
	case "onSessionEvent":
		var p struct {
			Event string `json:"event"`
			Scope string `json:"scope"`
			Units []Unit `json:"units"`
		}
		if err := decodePayload(req, &p); err != nil {
			return "", err
		}
		if err := checkEnum("event", p.Event, "session-kus-added", "session-kus-committed", "session-kus-discarded", "session-deleted"); err != nil {
			return "", err
		}
		if err := checkEnum("scope", p.Scope, "current-turn", "session"); err != nil {
			return "", err
		}
		return result("skipped", "", pluginID+" keeps no session index", req.ID).String(), nil
	}
	return retrieve(req)
}

func checkEnum(name, value string, allowed ...string) error {
	if value == "" {
		return nil
	}
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return invalid("payload: `%s` %q is not one of %s", name, value, strings.Join(allowed, ", "))
}

func checkUnits(units []Unit) error {
	for i, u := range units {
		if u.ID == "" || strings.ContainsAny(u.ID, " \t\n") || !roles[u.Role] || !kuTypes[u.KUType] {
			return invalid("payload: units[%d] needs an id without spaces, a known role and kuType", i)
		}
		if (u.Claim == nil) == (u.Procedure == nil) || (u.Procedure != nil) != (u.Role == "Procedure") {
			return invalid("payload: units[%d] needs a claim, or a procedure if and only if its role is Procedure", i)
		}
	}
	return nil
}

// ---------------------------------------------------------------------------- the index

// indexFile names the file that holds one source's units: readable, and unique by a hash.
func indexFile(folder, sourceID string) string {
	safe := regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(sourceID, "_")
	if len(safe) > 60 {
		safe = safe[:60]
	}
	sum := sha256.Sum256([]byte(sourceID))
	return filepath.Join(folder, "source-"+safe+"-"+hex.EncodeToString(sum[:4])+".json")
}

// writeAtomically writes data next to path and renames it into place, so a reader (another worker, a
// one-shot process) sees the old file or the new one, never a half-written one.
func writeAtomically(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func onSourceText(req *Request) (string, error) {
	var p struct {
		KBID       string `json:"kbId"`
		SourceID   string `json:"sourceId"`
		SourceName string `json:"sourceName"`
		Text       string `json:"text"`
		Units      []Unit `json:"units"`
		Action     string `json:"action"`
	}
	if err := decodePayload(req, &p); err != nil {
		return "", err
	}
	if err := checkEnum("action", p.Action, "upsert", "remove"); err != nil {
		return "", err
	}
	if err := checkUnits(p.Units); err != nil {
		return "", err
	}
	if req.Paths.Artifacts == nil || *req.Paths.Artifacts == "" {
		return result("skipped", "", "no artifacts folder in the request: nothing indexed", req.ID).String(), nil
	}
	if p.SourceID == "" {
		return "", invalid("payload of onSourceText: `sourceId` is required")
	}
	folder := *req.Paths.Artifacts
	path := indexFile(folder, p.SourceID)
	if p.Action == "remove" {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return "", &protocolError{"INDEX_WRITE_FAILED", err.Error(), 1}
		}
		return result("success", "high", "removed "+p.SourceID+" from the index", req.ID).String(), nil
	}
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return "", &protocolError{"INDEX_WRITE_FAILED", err.Error(), 1}
	}
	data, _ := json.Marshal(p.Units)
	if err := writeAtomically(path, data); err != nil {
		return "", &protocolError{"INDEX_WRITE_FAILED", err.Error(), 1}
	}
	fmt.Fprintf(os.Stderr, "kb-terms-go: indexed %d units of %s in %s\n", len(p.Units), p.SourceID, filepath.Base(path))
	summary := fmt.Sprintf("indexed %d units of %s", len(p.Units), p.SourceID)
	return result("success", "high", summary, req.ID).String(), nil
}

// loadIndex reads every source file of the artifacts folder (a missing folder is an empty index).
func loadIndex(folder string) []Unit {
	var units []Unit
	entries, err := os.ReadDir(folder)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "source-") || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(folder, e.Name()))
		if err != nil {
			continue
		}
		var part []Unit
		if json.Unmarshal(data, &part) == nil && checkUnits(part) == nil {
			units = append(units, part...)
		}
	}
	return units
}

// unitFromContext reads a flattened context item as a unit (SPEC.md §5: no Role means Description).
func unitFromContext(item ContextItem, i int) Unit {
	fields := map[string]string{}
	var loose []string
	for _, line := range strings.Split(item.Text, "\n") {
		name, value, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if ok && (name == "Role" || name == "Topic" || name == "Claim" || name == "Procedure" || name == "Title") {
			fields[strings.ToLower(name)] = strings.TrimSpace(value)
		} else if strings.TrimSpace(line) != "" {
			loose = append(loose, strings.TrimSpace(line))
		}
	}
	role := fields["role"]
	if !roles[role] {
		role = "Description"
	}
	body := fields["claim"]
	if body == "" {
		body = fields["procedure"]
	}
	if body == "" {
		body = strings.Join(loose, " ")
	}
	if body == "" {
		body = item.Title
	}
	if body == "" {
		body = "(empty context item)"
	}
	source := item.SourceLink
	if source == "" {
		source = "context"
	}
	id := strings.Join(strings.Fields(item.Title), "_")
	if id == "" {
		id = fmt.Sprintf("context::chunk-000::unit-%03d", i)
	}
	topic := fields["topic"]
	if topic == "" {
		topic = item.Title
	}
	if topic == "" {
		topic = body
	}
	u := Unit{ID: id, SourceID: source, ChunkID: source + "::chunk-000", KUType: "atomic", Role: role, Topic: topic}
	if role == "Procedure" {
		u.Procedure = &body
	} else {
		u.Claim = &body
	}
	return u
}

// ---------------------------------------------------------------------------- retrieve

func unitText(u Unit) string {
	parts := []string{u.Topic}
	for _, p := range []*string{u.Claim, u.Procedure, u.Title} {
		if p != nil {
			parts = append(parts, *p)
		}
	}
	return strings.Join(parts, " ")
}

type scored struct {
	unit    Unit
	score   float64
	covered int
}

func retrieve(req *Request) (string, error) {
	var p struct {
		Intents  []Intent `json:"intents"`
		Units    []Unit   `json:"units"`
		KBID     *string  `json:"kbId"`
		Purpose  string   `json:"purpose"`
		MaxUnits *int     `json:"maxUnits"`
		Phase    string   `json:"phase"`
	}
	if err := decodePayload(req, &p); err != nil {
		return "", err
	}
	if err := checkEnum("purpose", p.Purpose, "task-evidence", "strategy-guidance", "mixed"); err != nil {
		return "", err
	}
	if err := checkUnits(p.Units); err != nil {
		return "", err
	}
	maxUnits := 8
	if p.MaxUnits != nil {
		if *p.MaxUnits < 1 {
			return "", invalid("payload: `maxUnits` must be at least 1")
		}
		maxUnits = *p.MaxUnits
	}
	purpose := p.Purpose
	if purpose == "" {
		purpose = "task-evidence"
	}
	candidates := append([]Unit{}, p.Units...)
	if req.Paths.Artifacts != nil {
		candidates = append(candidates, loadIndex(*req.Paths.Artifacts)...)
	}
	var pool []Unit // inline units first: the current turn wins over an indexed copy of the same id
	ids := map[string]bool{}
	for _, u := range candidates {
		if !ids[u.ID] {
			ids[u.ID] = true
			pool = append(pool, u)
		}
	}
	if len(pool) == 0 {
		for i, item := range req.Context {
			pool = append(pool, unitFromContext(item, i))
		}
	}
	intents := p.Intents
	if len(intents) == 0 {
		intents = []Intent{{Index: 1, Intent: req.Prompt}}
	}
	// document frequencies over the pool, for an idf weight per term
	df := map[string]int{}
	unitTerms := make([]map[string]bool, len(pool))
	for i, u := range pool {
		unitTerms[i] = map[string]bool{}
		for _, t := range terms(unitText(u)) {
			unitTerms[i][t] = true
		}
		for t := range unitTerms[i] {
			df[t]++
		}
	}
	type resolved struct {
		index      int
		selected   []scored
		sufficient bool
	}
	var all []resolved
	best := map[string]float64{}
	forIntents := map[string][]string{}
	var order []string
	for n, intent := range intents {
		index := intent.Index
		if index < 1 {
			index = n + 1
		}
		query := map[string]bool{}
		for _, t := range terms(intent.Intent) {
			query[t] = true
		}
		var ranked []scored
		for i, u := range pool {
			s := scored{unit: u}
			for t := range query {
				if unitTerms[i][t] {
					s.score += math.Log(1 + float64(len(pool))/float64(df[t]))
					s.covered++
				}
			}
			if s.score > 0 {
				ranked = append(ranked, s)
			}
		}
		sort.SliceStable(ranked, func(a, b int) bool { return ranked[a].score > ranked[b].score })
		if len(ranked) > maxUnits {
			ranked = ranked[:maxUnits]
		}
		sufficient := len(ranked) > 0 && len(query) > 0 && float64(ranked[0].covered)/float64(len(query)) >= 0.5
		all = append(all, resolved{index, ranked, sufficient})
		for _, s := range ranked {
			if _, seen := best[s.unit.ID]; !seen {
				order = append(order, s.unit.ID)
			}
			if s.score > best[s.unit.ID] {
				best[s.unit.ID] = s.score
			}
			forIntents[s.unit.ID] = append(forIntents[s.unit.ID], fmt.Sprintf("intent-%d", index))
		}
	}
	status, confidence := "success", "medium"
	for _, r := range all {
		if !r.sufficient {
			status, confidence = "insufficient", "low"
		}
	}
	summary := fmt.Sprintf("%d units selected from %d for %d intent(s)", len(order), len(pool), len(all))
	doc := result(status, confidence, summary, req.ID)
	for _, r := range all {
		doc.Section(fmt.Sprintf("Resolved Intent %d", r.index))
		doc.Field("Sufficient", map[bool]string{true: "yes", false: "no"}[r.sufficient])
		doc.Field("Purpose", purpose)
		levels, ids := []string{}, []string{}
		seen := map[string]bool{}
		for _, s := range r.selected {
			ids = append(ids, s.unit.ID)
			if !seen[s.unit.KUType] {
				seen[s.unit.KUType] = true
				levels = append(levels, s.unit.KUType)
			}
		}
		doc.Field("KULevelsUsed", strings.Join(levels, ", "))
		doc.Field("TotalKUsConsidered", fmt.Sprint(len(pool)))
		doc.Field("Selected", strings.Join(ids, ", "))
	}
	byID := map[string]Unit{}
	for _, u := range pool {
		if _, ok := byID[u.ID]; !ok {
			byID[u.ID] = u
		}
	}
	for _, id := range order {
		u := byID[id]
		doc.Section("Context Unit " + id)
		doc.Field("SourceId", u.SourceID)
		doc.Field("ChunkId", u.ChunkID)
		doc.Field("KUType", u.KUType)
		doc.Field("Role", u.Role)
		doc.Field("Topic", u.Topic)
		if u.Procedure != nil {
			doc.Field("Procedure", *u.Procedure)
		} else if u.Claim != nil {
			doc.Field("Claim", *u.Claim)
		}
		if u.Title != nil {
			doc.Field("Title", *u.Title)
		}
		if u.SourceName != nil {
			doc.Field("SourceName", *u.SourceName)
		}
		doc.Field("Score", fmt.Sprintf("%.3f", best[id]))
		doc.Field("ResolvedFor", strings.Join(forIntents[id], ", "))
	}
	return doc.String(), nil
}
