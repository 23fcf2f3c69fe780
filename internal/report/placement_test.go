package report

import (
	"testing"

	"github.com/idpbench/idpbench/internal/schema"
)

func TestPlacementText(t *testing.T) {
	cases := []struct {
		name string
		in   *schema.Placement
		want string
	}{
		{"not recorded", nil, "not recorded (a meta from before placement was recorded)"},
		{"pinned", &schema.Placement{Mode: schema.PlacementPinned, DriverCPUs: "3", ServerCPUs: "0-2", HostCPUs: 4},
			"load generator and sampler on CPUs 3, product and PostgreSQL on CPUs 0-2 (pinned; 4 CPUs)"},
		{"shared with reason", &schema.Placement{Mode: schema.PlacementShared, DriverCPUs: "0-1", ServerCPUs: "0-1", HostCPUs: 2,
			Reason: "2 CPUs: fewer than 4, driver and server share them"},
			"shared: 2 CPUs: fewer than 4, driver and server share them"},
		{"shared without reason", &schema.Placement{Mode: schema.PlacementShared, HostCPUs: 8}, "shared: 8 CPUs, nothing pinned"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := placementText(tc.in); got != tc.want {
				t.Errorf("placementText = %q, want %q", got, tc.want)
			}
		})
	}
}
