package media

import (
	"strings"
	"testing"
)

// A position no player can be at (negative, or beyond any media's length,
// as a broken or hostile device may report) is left out of the phrase
// instead of printed as "0:-5" or "-153722867280912930:-8".
func TestDescribeStateOmitsImpossiblePositions(t *testing.T) {
	for in, want := range map[string]string{
		`{"state":"playing","attributes":{"media_position":1e30,"media_title":"x"}}`: "playing x",
		`{"state":"playing","position_seconds":-5,"media_uri":"a.mp3"}`:              "playing a.mp3",
		`{"idle":false,"path":"/m/a.mkv","pause":false,"time_pos":-3}`:               "playing a.mkv",
		`{"state":"paused","position_seconds":1e300}`:                                "paused",
		`{"state":"paused","attributes":{"media_position":12.5,"media_title":"x"}}`:  "paused at 0:12 of x",
		`{"state":"playing","position_seconds":3725,"media_uri":"a.mp3"}`:            "playing at 1:02:05 of a.mp3",
	} {
		got := DescribeState([]byte(in))
		if got != want || strings.Contains(got, "-") {
			t.Errorf("%s => %q, want %q", in, got, want)
		}
	}
}

// One attribute of an unexpected type (a custom integration's string
// position) does not lose the rest of the state: the title and the state
// are still read, and the state read does not fail.
func TestHassStateOddAttributeType(t *testing.T) {
	in := `{"entity_id":"media_player.k","state":"playing","attributes":{"media_position":"12","media_title":"Kind of Blue","media_content_id":7}}`
	if got := DescribeState([]byte(in)); got != "playing Kind of Blue" {
		t.Errorf("DescribeState = %q", got)
	}
	st, err := parseHassState([]byte(in))
	if err != nil || st.MediaTitle != "Kind of Blue" || st.Position != nil || st.MediaURI != "" {
		t.Errorf("parseHassState = %+v, %v", st, err)
	}
}
