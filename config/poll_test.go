package config

import (
	"strings"
	"testing"
	"time"
)

// The poller's rhythm defaults to 1 s while active, 30 s at rest, active
// for 5 minutes after a call, with the bucket list kept 10 s; each reads
// its AWBRIDGE_POLL_* variable and refuses values out of bounds.
func TestPollSettings(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want Poll
		err  string
	}{
		{"defaults", nil, Poll{Interval: time.Second, IdleInterval: 30 * time.Second, ActiveFor: 5 * time.Minute, BucketListTTL: 10 * time.Second}, ""},
		{"environment", map[string]string{"AWBRIDGE_POLL_INTERVAL": "500ms", "AWBRIDGE_POLL_IDLE_INTERVAL": "2m",
			"AWBRIDGE_POLL_ACTIVE_FOR": "1m", "AWBRIDGE_POLL_BUCKET_LIST_TTL": "30s"},
			Poll{Interval: 500 * time.Millisecond, IdleInterval: 2 * time.Minute, ActiveFor: time.Minute, BucketListTTL: 30 * time.Second}, ""},
		{"interval too short", map[string]string{"AWBRIDGE_POLL_INTERVAL": "10ms"}, Poll{}, "AWBRIDGE_POLL_INTERVAL"},
		{"idle interval zero", map[string]string{"AWBRIDGE_POLL_IDLE_INTERVAL": "0"}, Poll{}, "AWBRIDGE_POLL_IDLE_INTERVAL"},
		{"active for negative", map[string]string{"AWBRIDGE_POLL_ACTIVE_FOR": "-1m"}, Poll{}, "AWBRIDGE_POLL_ACTIVE_FOR"},
		{"bucket list kept too long", map[string]string{"AWBRIDGE_POLL_BUCKET_LIST_TTL": "2h"}, Poll{}, "AWBRIDGE_POLL_BUCKET_LIST_TTL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := load(t, tt.env)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Load = %v, want an error naming %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.Config.Poll != tt.want {
				t.Errorf("poll %+v, want %+v", l.Config.Poll, tt.want)
			}
			if err := validate(l.Config); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}
