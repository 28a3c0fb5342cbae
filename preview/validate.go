package preview

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"sort"
	"strings"
)

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && strings.IndexByte("!#$%&'*+-.^_`|~", c) < 0 {
			return false
		}
	}
	return true
}

// Validate checks a driver's planned request before it is previewed. Errors name the field and the rule and
// quote values only masked, so an error message never carries a secret either. The errors are plain: preview
// sits below the engine, and a caller that fails a task on one wraps it in its own failure code.
func (r Request) Validate() error {
	if !isToken(r.Method) {
		return fmt.Errorf("method: must be an HTTP token such as POST, got %q", MaskString(r.Method))
	}
	if r.URL == "" {
		return errors.New("url: must not be empty")
	}
	if strings.ContainsAny(r.URL, " \t\r\n") {
		return fmt.Errorf("url: must not contain whitespace, got %q", MaskURL(r.URL))
	}
	names := make([]string, 0, len(r.Headers))
	for k := range r.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !isToken(k) {
			return fmt.Errorf("headers: name %q must be an HTTP token", MaskString(k))
		}
		if strings.ContainsAny(r.Headers[k], "\r\n\x00") {
			return fmt.Errorf("headers.%s: must not contain CR, LF or NUL", MaskString(k))
		}
	}
	if r.ContentType != "" {
		if _, _, err := mime.ParseMediaType(r.ContentType); err != nil {
			return fmt.Errorf("content_type: must be a media type, got %q", MaskString(r.ContentType))
		}
	}
	return nil
}

// Fingerprint is an HMAC-SHA256 (hex) over the unmasked request with a key that never leaves the machine.
// Hash binds an approval to what the person saw; Fingerprint also catches a change hidden under a mask
// (a different password behind the same ********). A plain hash of the unmasked request would let anyone
// holding the audit log test guesses for short secrets, hence the key.
func (r Request) Fingerprint(key []byte) string {
	b, _ := json.Marshal(struct { // a struct of strings, a string map and bytes always marshals
		Method, URL, ContentType string
		Headers                  map[string]string
		Body                     []byte
	}{r.Method, r.URL, r.ContentType, r.Headers, r.Body})
	mac := hmac.New(sha256.New, key)
	mac.Write(b)
	return hex.EncodeToString(mac.Sum(nil))
}
