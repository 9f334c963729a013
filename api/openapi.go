package api

import (
	_ "embed"
	"net/http"

	"github.com/gin-gonic/gin"
)

// openAPIDocument describes every route; a test keeps it and routes() equal.
//
//go:embed openapi.json
var openAPIDocument []byte

func (s *server) openAPI(c *gin.Context) {
	c.Data(http.StatusOK, "application/json", openAPIDocument)
}
