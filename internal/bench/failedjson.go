package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// failedJSON is the JSON of a failed row v, a struct: the fields with the
// given JSON names alone, in v's order, each written even if empty (its
// omitempty aside). A failed row's other figures would read 0 beside its
// error, as if measured. Every name must be one of v's fields.
func failedJSON(v any, names ...string) ([]byte, error) {
	rv := reflect.ValueOf(v)
	rt := rv.Type()
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" || !slices.Contains(names, name) {
			continue
		}
		val, err := json.Marshal(rv.Field(i).Interface())
		if err != nil {
			return nil, err
		}
		key, _ := json.Marshal(name)
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.Write(key)
		b.WriteByte(':')
		b.Write(val)
	}
	if n != len(names) {
		return nil, fmt.Errorf("bench: a failed %T: %d of the fields %q", v, n, names)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
