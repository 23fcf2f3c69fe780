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

func TestRoundsText(t *testing.T) {
	cases := []struct {
		in   *schema.Rounds
		want string
	}{
		{nil, "not recorded (a meta from before the rounds were recorded: each product's rounds ran back to back)"},
		{&schema.Rounds{Count: 1, Order: schema.RoundsSingle}, "1"},
		{&schema.Rounds{Count: 3, Order: schema.RoundsInterleaved}, "3, interleaved with the other products' (round r of every product, then round r+1): " +
			"a cell's windows come from stretches of the run minutes apart; between its rounds the product stayed up, idle"},
		{&schema.Rounds{Count: 4, Order: schema.RoundsRandom, Seed: 7}, "4, interleaved with the other products' (round r of every product, then round r+1), " +
			"every round after the first in a drawn order of the products and of each product's scenarios (seed 7): " +
			"a slow spell of the machine falls on a different cell each round; between its rounds the product stayed up, idle"},
	}
	for _, tc := range cases {
		if got := roundsText(tc.in); got != tc.want {
			t.Errorf("roundsText(%+v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
