package registry

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

type thing struct{ name string }

func TestRegistry(t *testing.T) {
	r := New("lock", func(t thing) string { return t.name }, func(t thing) error {
		if t.name == "bad" {
			return errors.New("is bad")
		}
		return nil
	}, thing{"a"}, thing{"b"})
	if err := r.Add(thing{"bad"}); err == nil || err.Error() != `lock "bad": is bad` {
		t.Errorf("a bad thing: want refused, got %v", err)
	}
	if err := r.Add(thing{"a"}); err == nil || !strings.Contains(err.Error(), `"a" is registered already`) {
		t.Errorf("a second a: want refused, got %v", err)
	}
	if err := r.Add(thing{}); err == nil {
		t.Error("no name: want refused")
	}
	if got, err := r.Lookup("b"); err != nil || got.name != "b" {
		t.Errorf("lookup b: got %v, %v", got, err)
	}
	if _, err := r.Lookup("c"); err == nil || err.Error() != `unknown lock "c" (known: a, b)` {
		t.Errorf("lookup c: got %v", err)
	}
	if exp, got := []string{"a", "b"}, r.Names(); !slices.Equal(exp, got) {
		t.Errorf("names: want %v, got %v", exp, got)
	}
}
