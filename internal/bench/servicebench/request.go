package main

import (
	"encoding/json"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
)

// requestBody is the JSON a client sends to store d: the API's own request
// type (wire.DocumentRequest), so the bench cannot drift from it.
func requestBody(d fund.Document) ([]byte, error) {
	return json.Marshal(wire.RequestOf(d))
}

// titleOf reads the title of a document version's response
// (wire.DocumentVersion), from its header alone.
func titleOf(body []byte) (string, error) {
	var h wire.DocumentHeader
	err := json.Unmarshal(body, &h)
	return h.Title, err
}
