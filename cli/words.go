package cli

import "strconv"

// plural is a count in words: "1 entry", "2 entries", "0 rules".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
