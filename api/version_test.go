package api

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestTheAPIVersionIsTheChangelogsNewest: Version is the newest
// "## x.y.z — date" heading of CHANGELOG.md, whose versions and dates
// descend; README.md and the committed OpenAPI document state it.
func TestTheAPIVersionIsTheChangelogsNewest(t *testing.T) {
	changelog, err := os.ReadFile("../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	headings := regexp.MustCompile(`(?m)^## (\d+)\.(\d+)\.(\d+) — (\d{4}-\d{2}-\d{2})$`).FindAllSubmatch(changelog, -1)
	if len(headings) == 0 {
		t.Fatal(`CHANGELOG.md has no "## x.y.z — yyyy-mm-dd" heading`)
	}
	if newest := string(headings[0][1]) + "." + string(headings[0][2]) + "." + string(headings[0][3]); newest != Version {
		t.Errorf("CHANGELOG.md's newest version is %s, api.Version %s", newest, Version)
	}
	var last struct {
		version [3]int
		date    time.Time
	}
	for i, h := range headings {
		var v [3]int
		for j := range v {
			n, err := strconv.Atoi(string(h[j+1]))
			if err != nil {
				t.Fatal(err)
			}
			v[j] = n
		}
		date, err := time.Parse(time.DateOnly, string(h[4]))
		if err != nil {
			t.Errorf("CHANGELOG.md %q: %v", h[0], err)
		}
		if i > 0 && (!lessVersion(v, last.version) || !date.Before(last.date)) {
			t.Errorf("CHANGELOG.md %q is not older than the version above it", h[0])
		}
		last.version, last.date = v, date
	}

	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	stated := regexp.MustCompile(`The API is version (\S+) `).FindAllStringSubmatch(string(readme), -1)
	if len(stated) != 1 || stated[0][1] != Version {
		t.Errorf("README.md states the API's version as %q, want once as %s", stated, Version)
	}

	var doc struct {
		Info struct {
			Version string `json:"version"`
		} `json:"info"`
	}
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Info.Version != Version {
		t.Errorf("api/openapi.json's info.version is %q, api.Version %s: run make openapi", doc.Info.Version, Version)
	}
}

// lessVersion reports whether version a precedes b.
func lessVersion(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
