package natsqueue

import (
	"github.com/vigil-dev/vigil/preview"
	"github.com/vigil-dev/vigil/safetext"
)

// maxServerText bounds the server's part of an error shown to a person.
const maxServerText = 400

// serverError is an error the NATS server (or the client library on its
// behalf) gave, as a person or a log may see it: a server's error text can
// echo what a client sent (a subject, a header, the token it connected
// with), and a hostile or broken server can send anything. Its text is
// masked first (preview.Snippet: every secret shape, and the credentials
// this process sent, whatever their shape), then cut, then made
// display-safe; errors.Is and errors.As still reach the error it wraps.
type serverError struct {
	text string
	err  error
}

func (e *serverError) Error() string { return e.text }
func (e *serverError) Unwrap() error { return e.err }

// shown wraps a NATS error as a serverError; known are secrets the caller
// sent (a token, a password), masked wherever they appear. nil stays nil.
func shown(err error, known ...string) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*serverError); ok && len(known) == 0 {
		return err // masked already
	}
	return &serverError{text: safetext.Line(preview.Snippet(err.Error(), maxServerText, known...)), err: err}
}

// shownText is a text the bucket holds that reaches a person (a refusal's
// message): anyone who may write the bucket could have put it there.
func shownText(s string) string {
	return safetext.Line(preview.Snippet(s, maxServerText))
}
