package search

import (
	"errors"
	"fmt"
	"strconv"
)

// Field names one input of a Request, spelled as its JSON key, so that a
// UI can put an error beside the input it is about without reading the
// message.
type Field string

// The Request's fields, and FieldRequest for the request as a whole (bad
// JSON, trailing data).
const (
	FieldRequest           Field = "request"
	FieldPattern           Field = "pattern"
	FieldPath              Field = "path"
	FieldCase              Field = "case"
	FieldFixedStrings      Field = "fixed_strings"
	FieldWordRegexp        Field = "word_regexp"
	FieldIncludeGlob       Field = "include_glob"
	FieldExcludeGlob       Field = "exclude_glob"
	FieldGlob              Field = "glob"
	FieldRecursive         Field = "recursive"
	FieldHidden            Field = "hidden"
	FieldFollow            Field = "follow"
	FieldNoIgnore          Field = "no_ignore"
	FieldContext           Field = "context"
	FieldMaxResults        Field = "max_results"
	FieldMaxMatchesPerFile Field = "max_matches_per_file"
	FieldMaxFiles          Field = "max_files"
	FieldMaxFileSizeBytes  Field = "max_file_size_bytes"
	FieldTimeoutMS         Field = "timeout_ms"
	FieldFuzzy             Field = "fuzzy"
)

// FieldError is what is wrong with one field of a request. Every error
// Run, DecodeRequest and Validate return about a request carries one
// (errors.As through the ToolError); Msg is the rule, in words.
type FieldError struct {
	Field Field
	// Index is the element of a list field (include_glob[2]) the error is
	// about, or -1 for the field as a whole.
	Index int
	Msg   string
	// Err is the cause where there is one: a *RegexError for a pattern the
	// backend refused, the glob compiler's error for a glob.
	Err error
}

func (e *FieldError) Error() string {
	if e.Index >= 0 {
		return string(e.Field) + "[" + strconv.Itoa(e.Index) + "]: " + e.Msg
	}
	return string(e.Field) + ": " + e.Msg
}

func (e *FieldError) Unwrap() error { return e.Err }

// RegexError is a pattern the backend could not compile, told in the
// person's own pattern: Offset is a byte offset into Request.Pattern as
// given (never into the pattern as Vigil rewrote it for a backend), or -1
// where the backend's report could not be placed in it.
type RegexError struct {
	Backend string
	Reason  string
	Offset  int
}

func (e *RegexError) Error() string {
	if e.Offset < 0 {
		return e.Reason
	}
	return fmt.Sprintf("%s at offset %d", e.Reason, e.Offset)
}

// fieldError is a ToolError of the given kind about one whole field.
func fieldError(kind ErrorKind, f Field, cause error, format string, a ...any) *ToolError {
	return toolError(kind, &FieldError{Field: f, Index: -1, Msg: fmt.Sprintf(format, a...), Err: cause})
}

// elemError is a BadArgs about element i of a list field.
func elemError(f Field, i int, cause error, format string, a ...any) *ToolError {
	return toolError(BadArgs, &FieldError{Field: f, Index: i, Msg: fmt.Sprintf(format, a...), Err: cause})
}

func toolError(kind ErrorKind, fe *FieldError) *ToolError {
	return &ToolError{Kind: kind, Message: fe.Error(), Err: fe}
}

// badField is the common case: BadArgs about one whole field.
func badField(f Field, format string, a ...any) *ToolError {
	return fieldError(BadArgs, f, nil, format, a...)
}

// FieldOf reports the field an error is about, if it is about one.
func FieldOf(err error) (*FieldError, bool) {
	var fe *FieldError
	ok := errors.As(err, &fe)
	return fe, ok
}
