// Package report renders facts and findings for people (text, Markdown) and
// programs (JSON).
package report

import (
	"encoding/json"
	"io"

	"github.com/fastpath-dev/fastpath/internal/diagnose"
)

// Doctor is the JSON document of `fastpath doctor --json`, declared in
// diagnose so that remote and fleet need not import a renderer.
type Doctor = diagnose.Doctor

// JSON writes v indented, with a trailing newline.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
