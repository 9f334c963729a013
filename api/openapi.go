package api

import (
	_ "embed"
	"net/http"

	"github.com/gin-gonic/gin"
)

// openAPIDocument describes every route. It is generated from the route
// table and the wire types (openapi_gen.go); TestOpenAPIGolden fails when
// the file differs from what they generate, and make openapi rewrites it.
//
//go:embed openapi.json
var openAPIDocument []byte

func (s *server) openAPI(c *gin.Context) {
	c.Data(http.StatusOK, "application/json", openAPIDocument)
}
