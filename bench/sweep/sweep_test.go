package sweep

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		vary   string
		values []string // the points' values as written, or the error's text
		err    string
	}{
		{vary: "ttl=250ms..4s:5", values: []string{"250ms", "500ms", "1s", "2s", "4s"}},
		{vary: "buyers=10,100,100", values: []string{"10", "100"}}, // a repeated value runs once
		{vary: "pause-rate=0.01,0.1", values: []string{"0.01", "0.1"}},
		{vary: "ttl", err: "want SETTING=FROM..TO:N"},
		{vary: "colour=1,2", err: `unknown setting "colour"`},
		{vary: "ttl=4s..250ms:3", err: "want FROM below TO"},
		{vary: "ttl=1s..2s:1", err: "2 to 50 points"},
		{vary: "buyers=0", err: "not a count of at least 1"},
		{vary: "pause-rate=1.5", err: "not a share"},
	}
	for _, tt := range tests {
		v, err := Parse(tt.vary)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: want an error saying %q, got %v", tt.vary, tt.err, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.vary, err)
			continue
		}
		var got []string
		for _, p := range v.points {
			got = append(got, p.Value)
		}
		if strings.Join(got, " ") != strings.Join(tt.values, " ") {
			t.Errorf("%s: points %q, want %q", tt.vary, got, tt.values)
		}
	}
}
