package task

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxDisplayBytes bounds a field Vigil shows to a person or keys on (a
// lease's sub, jti and task_id, a manifest's task_id and target_device).
const MaxDisplayBytes = 256

// CheckDisplay reports why s is not fit to be shown on one line or used as
// a key: longer than MaxDisplayBytes, not UTF-8, or holding a control or
// format character (Unicode Cc, Cf, Zl, Zp), a space other than U+0020, or
// another character with no visible form (Hangul fillers, variation
// selectors: Other_Default_Ignorable_Code_Point).
// The message names the rule and the offending character's code point and
// position, never the raw value. nil when s is fine (empty is fine here;
// callers that need a value say so).
func CheckDisplay(s string) error { return CheckText(s, MaxDisplayBytes) }

// CheckText is CheckDisplay with another length bound (free text such as a
// denial's reason).
func CheckText(s string, max int) error {
	if len(s) > max {
		return fmt.Errorf("longer than %d bytes (%d)", max, len(s))
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("not valid UTF-8")
	}
	for i, r := range s {
		var kind string
		switch {
		case unicode.Is(unicode.Cc, r):
			kind = "a control character"
		case unicode.Is(unicode.Cf, r):
			kind = "a format (invisible) character"
		case unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r):
			kind = "a line or paragraph separator"
		case unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r), unicode.Is(unicode.Variation_Selector, r):
			kind = "an invisible character"
		case r == utf8.RuneError:
			kind = "a replacement character (the value was not valid UTF-8)"
		case r != ' ' && unicode.IsSpace(r), unicode.Is(unicode.Zs, r) && r != ' ':
			kind = "a space other than U+0020"
		default:
			continue
		}
		return fmt.Errorf("must not contain %s (U+%04X at byte %d)", kind, r, i)
	}
	return nil
}
