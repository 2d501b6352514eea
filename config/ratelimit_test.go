package config

import (
	"strings"
	"testing"
)

func TestParseRateLimits(t *testing.T) {
	tests := []struct {
		in      string
		want    map[string]Rate
		wantErr bool
	}{
		{"", map[string]Rate{}, false},
		{"nowframe_build=5/s", map[string]Rate{"nowframe_build": {PerSecond: 5}}, false},
		{"a=5/s:10, b=30/m", map[string]Rate{"a": {5, 10}, "b": {0.5, 0}}, false},
		{"a=0/s", nil, true},
		{"a=5", nil, true},
		{"a=5/h", nil, true},
		{"a=5/s,a=6/s", nil, true},
		{"a b=5/s", nil, true},
		{strings.Repeat("n", 64) + "=1/s", map[string]Rate{strings.Repeat("n", 64): {PerSecond: 1}}, false},
		{strings.Repeat("n", 65) + "=1/s", nil, true},
		{"a=1/s:999999", map[string]Rate{"a": {1, 999999}}, false},
		{"a=1/s:1000000", nil, true},
		{"a.b-c_d=2.5/m", map[string]Rate{"a.b-c_d": {2.5 / 60, 0}}, false},
		{"=1/s", nil, true},
		{"a=1/s:", nil, true},
		{"a=1./s", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseRateLimits(tt.in)
		if (err != nil) != tt.wantErr {
			t.Fatalf("%q: err %v", tt.in, err)
		}
		if err == nil && len(got) != len(tt.want) {
			t.Fatalf("%q: %v, want %v", tt.in, got, tt.want)
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Fatalf("%q: %s = %v, want %v", tt.in, k, got[k], v)
			}
		}
	}
}
