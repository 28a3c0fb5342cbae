package memory

import (
	"encoding/json"
	"io"
)

// jsonLine writes v as one JSON line without HTML escaping.
func jsonLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
