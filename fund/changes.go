package fund

import (
	"bytes"
	"encoding/json"
)

// Changes are what a version of a document changed against the version it
// replaced, position by position: the positions it added, removed and
// changed, in all and for each kind of item.
type Changes struct {
	// Replaced is the version compared against.
	Replaced int
	// Positions are the positions whole: added (reported now, not before),
	// removed (reported before, not now) and changed (reported by both, with
	// an item added, removed or different).
	Positions PositionChanges
	// Items are the positions whose item of each kind was added, removed
	// or changed, indexed as ItemKinds.
	Items [4]PositionChanges
}

// PositionChanges lists position IDs by what happened to them, each list
// sorted, never nil.
type PositionChanges struct {
	Added   []string `json:"added" doc:"The IDs of the positions added: reported (with an item of this type, in an item type's list) by this version and not by the one it replaced. Sorted; empty when none."`
	Removed []string `json:"removed" doc:"The IDs of the positions removed: reported (with an item of this type, in an item type's list) by the replaced version and not by this one. Sorted; empty when none."`
	Changed []string `json:"changed" doc:"The IDs of the positions reported by both versions whose content differs: an item added, removed or with any value changed (in an item type's list, that type's item). Sorted; empty when none."`
}

// Of returns the changes of the items of kind k.
func (c *Changes) Of(k ItemKind) PositionChanges {
	for i, kind := range ItemKinds {
		if kind == k {
			return c.Items[i]
		}
	}
	return PositionChanges{}
}

// Compare returns what next changed against prev. Both list their
// positions sorted by ID, as a stored or validated document does. Items
// are compared by their JSON form: every field of an item is in it, and
// each value (amounts included, which print canonically) has one spelling,
// so an item read back from the store equals the one that was sent.
func Compare(prev, next *Document) Changes {
	c := Changes{Replaced: prev.Version, Positions: emptyChanges()}
	for i := range c.Items {
		c.Items[i] = emptyChanges()
	}
	i, j := 0, 0
	for i < len(prev.Positions) || j < len(next.Positions) {
		var before, after *Position
		switch {
		case j == len(next.Positions) || (i < len(prev.Positions) && prev.Positions[i].ID < next.Positions[j].ID):
			before = &prev.Positions[i]
			i++
		case i == len(prev.Positions) || next.Positions[j].ID < prev.Positions[i].ID:
			after = &next.Positions[j]
			j++
		default:
			before, after = &prev.Positions[i], &next.Positions[j]
			i, j = i+1, j+1
		}
		id := positionID(before, after)
		changed := false
		for k, kind := range ItemKinds {
			old, now := itemJSON(before, kind), itemJSON(after, kind)
			switch {
			case old == nil && now == nil:
			case old == nil:
				c.Items[k].Added = append(c.Items[k].Added, id)
				changed = true
			case now == nil:
				c.Items[k].Removed = append(c.Items[k].Removed, id)
				changed = true
			case !bytes.Equal(old, now):
				c.Items[k].Changed = append(c.Items[k].Changed, id)
				changed = true
			}
		}
		switch {
		case before == nil:
			c.Positions.Added = append(c.Positions.Added, id)
		case after == nil:
			c.Positions.Removed = append(c.Positions.Removed, id)
		case changed:
			c.Positions.Changed = append(c.Positions.Changed, id)
		}
	}
	return c
}

func emptyChanges() PositionChanges {
	return PositionChanges{Added: []string{}, Removed: []string{}, Changed: []string{}}
}

func positionID(before, after *Position) string {
	if before != nil {
		return before.ID
	}
	return after.ID
}

// itemJSON is the JSON form of p's item of kind k, nil when p (or its item
// of that kind) is absent.
func itemJSON(p *Position, k ItemKind) []byte {
	if p == nil {
		return nil
	}
	var item any
	switch k {
	case Statement:
		if p.CapitalAccount != nil {
			item = p.CapitalAccount
		}
	case CapitalCall:
		if p.CapitalCall != nil {
			item = p.CapitalCall
		}
	case Distribution:
		if p.Distribution != nil {
			item = p.Distribution
		}
	case UnfundedCommitment:
		if p.UnfundedCommitment != nil {
			item = p.UnfundedCommitment
		}
	}
	if item == nil {
		return nil
	}
	b, err := json.Marshal(item)
	if err != nil {
		// The declared items are plain data whose every value marshals.
		panic("fund: an item does not marshal: " + err.Error())
	}
	return b
}
