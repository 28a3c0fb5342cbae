package memory

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Argument rules of seed 002.
const (
	MaxQueryRunes = 1000
	DefaultLimit  = 10
	MinLimit      = 1
	MaxLimit      = 100
)

var dateRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// ParseArguments validates a search_memory arguments object exactly as an MCP
// client sends it. On failure it returns every broken rule in field order
// (query, limit, filters), with the seed's field paths and wording.
func ParseArguments(raw []byte) (Request, []FieldError) { return parseArguments(raw, false) }

// ParseListArguments is ParseArguments for a listing (the Memory pane, `vigil
// memory list`), where the query is optional: without one the filters alone
// choose the memories, which Find lists newest first. A query that is given
// follows the tool's rules (an empty or blank one is refused).
func ParseListArguments(raw []byte) (Request, []FieldError) { return parseArguments(raw, true) }

func parseArguments(raw []byte, optionalQuery bool) (Request, []FieldError) {
	var errs []FieldError
	bad := func(f, msg string) { errs = append(errs, FieldError{f, msg}) }
	req := Request{Limit: DefaultLimit}

	top, ok := object(raw)
	if !ok {
		bad("arguments", "value is not a valid dict")
		return req, errs
	}
	for _, k := range top.order {
		if k != "query" && k != "limit" && k != "filters" {
			bad(k, "extra fields not permitted")
		}
	}

	// query
	if v, ok := top.get("query"); !ok || isNull(v) {
		if !optionalQuery {
			bad("query", "field required")
		}
	} else if s, ok := jsonString(v); !ok {
		bad("query", "str type expected")
	} else if !validText(v) {
		bad("query", "must be valid UTF-8 text")
	} else if s == "" {
		bad("query", "ensure this value has at least 1 character")
	} else if t := strings.TrimSpace(s); t == "" {
		bad("query", "cannot be whitespace-only")
	} else if utf8.RuneCountInString(t) > MaxQueryRunes {
		bad("query", "ensure this value has at most 1000 characters")
	} else {
		req.Query = t
	}

	// limit
	if v, ok := top.get("limit"); ok && !isNull(v) {
		switch n, ok := jsonInt(v); {
		case !ok:
			bad("limit", "value is not a valid integer")
		case n < MinLimit:
			bad("limit", "ensure this value is greater than or equal to 1")
		case n > MaxLimit:
			bad("limit", "ensure this value is less than or equal to 100")
		default:
			req.Limit = int(n)
		}
	}

	// filters
	if v, ok := top.get("filters"); ok && !isNull(v) {
		req.Filters, errs = parseFilters(v, errs)
	}
	return req, errs
}

func parseFilters(raw json.RawMessage, errs []FieldError) (Filters, []FieldError) {
	bad := func(f, msg string) { errs = append(errs, FieldError{f, msg}) }
	var f Filters
	obj, ok := object(raw)
	if !ok {
		bad("filters", "value is not a valid dict")
		return f, errs
	}
	for _, k := range obj.order {
		if k != "tags" && k != "source" && k != "date_from" && k != "date_to" {
			bad("filters", "extra fields not permitted")
			break
		}
	}
	if v, ok := obj.get("tags"); ok && !isNull(v) {
		if tags, msg := parseTags(v); msg != "" {
			bad("filters.tags", msg)
		} else {
			f.Tags = tags
		}
	}
	if v, ok := obj.get("source"); ok && !isNull(v) {
		switch s, ok := jsonString(v); {
		case !ok:
			bad("filters.source", "str type expected")
		case !validText(v):
			bad("filters.source", "must be valid UTF-8 text")
		case s == "":
			bad("filters.source", "ensure this value has at least 1 character")
		case utf8.RuneCountInString(s) > MaxSourceRunes:
			bad("filters.source", "ensure this value has at most 100 characters")
		default:
			f.Source = s
		}
	}
	dateOK := true
	for _, k := range []string{"date_from", "date_to"} {
		v, ok := obj.get(k)
		if !ok || isNull(v) {
			continue
		}
		d, ok := parseDate(v)
		if !ok {
			bad("filters."+k, "invalid date format, expected YYYY-MM-DD")
			dateOK = false
			continue
		}
		if k == "date_from" {
			f.DateFrom = d
		} else {
			f.DateTo = d
		}
	}
	if dateOK && !f.DateFrom.IsZero() && !f.DateTo.IsZero() && f.DateFrom.After(f.DateTo) {
		bad("filters", "date_from must be <= date_to")
	}
	return f, errs
}

// parseTags reads filters.tags: a list of at most MaxTags non-blank
// strings of at most MaxTagRunes each. msg, when set, is the first rule
// broken.
func parseTags(v json.RawMessage) (tags []string, msg string) {
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil || bytes.TrimSpace(v)[0] != '[' {
		return nil, "value is not a valid list"
	}
	for _, it := range items {
		s, ok := jsonString(it)
		switch {
		case !ok:
			return nil, "value is not a valid string"
		case !validText(it):
			return nil, "each tag must be valid UTF-8 text"
		case strings.TrimSpace(s) == "":
			return nil, "ensure each tag has at least 1 character"
		case utf8.RuneCountInString(s) > MaxTagRunes:
			return nil, "ensure each tag has at most 100 characters"
		}
		tags = append(tags, s)
	}
	if len(tags) > MaxTags {
		return nil, "ensure this list has at most 32 items"
	}
	return tags, ""
}

func parseDate(v json.RawMessage) (time.Time, bool) {
	s, ok := jsonString(v)
	if !ok || !dateRE.MatchString(s) {
		return time.Time{}, false
	}
	d, err := time.Parse("2006-01-02", s)
	if err != nil || d.Year() < 1 { // calendar check: 2025-02-30 fails here
		return time.Time{}, false
	}
	return d, true
}

// jsonObject keeps key order so errors come out in the client's order.
type jsonObject struct {
	order []string
	vals  map[string]json.RawMessage
}

func (o jsonObject) get(k string) (json.RawMessage, bool) { v, ok := o.vals[k]; return v, ok }

func object(raw []byte) (jsonObject, bool) {
	o := jsonObject{vals: map[string]json.RawMessage{}}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return o, false
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return o, false
		}
		k, ok := kt.(string)
		if !ok {
			return o, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return o, false
		}
		if _, dup := o.vals[k]; !dup {
			o.order = append(o.order, k)
		}
		o.vals[k] = v
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return o, false
	}
	// Anything after the object (a second value) makes the input invalid.
	if _, err := dec.Token(); err == nil {
		return o, false
	}
	return o, true
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

func jsonString(v json.RawMessage) (string, bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || v[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// jsonInt accepts JSON numbers with no fractional part (JSON Schema's
// "integer": 10 and 10.0), never strings or booleans. Out-of-range integers
// are clamped so the range check reports them.
func jsonInt(v json.RawMessage) (int64, bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || !(v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && math.IsInf(f, 0) {
			if f > 0 {
				return math.MaxInt64, true
			}
			return math.MinInt64, true
		}
		return 0, false // syntax error, or a tiny non-zero fraction that underflowed
	}
	if f != math.Trunc(f) {
		return 0, false
	}
	if f == 0 {
		// 1e-400 underflows to 0 without an error but is not an integer.
		mant, _, _ := strings.Cut(strings.ToLower(string(v)), "e")
		if strings.ContainsAny(mant, "123456789") {
			return 0, false
		}
	}
	switch {
	case f > 1e15:
		return math.MaxInt64, true
	case f < -1e15:
		return math.MinInt64, true
	}
	return int64(f), true
}

// validText reports whether a JSON string literal holds valid UTF-8: no raw
// invalid bytes and no unpaired surrogate escapes. encoding/json would turn
// both into U+FFFD silently.
func validText(lit json.RawMessage) bool {
	lit = bytes.TrimSpace(lit)
	if !utf8.Valid(lit) {
		return false
	}
	b := lit[1 : len(lit)-1]
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		i++
		if i >= len(b) || b[i] != 'u' {
			continue
		}
		if i+5 > len(b) {
			return false
		}
		r, err := strconv.ParseUint(string(b[i+1:i+5]), 16, 32)
		if err != nil {
			return false
		}
		i += 4
		switch {
		case r >= 0xD800 && r < 0xDC00: // high surrogate: a low one must follow
			if i+7 > len(b) || b[i+1] != '\\' || b[i+2] != 'u' {
				return false
			}
			lo, err := strconv.ParseUint(string(b[i+3:i+7]), 16, 32)
			if err != nil || lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 6
		case r >= 0xDC00 && r <= 0xDFFF:
			return false
		}
	}
	return true
}
