// Starts Swagger UI on the page at /docs. A separate file, not an inline
// script, because the page's Content-Security-Policy allows scripts from
// 'self' only.
window.ui = SwaggerUIBundle({
  // Relative to the page (/docs), so behind a path prefix too.
  url: "openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  // The default validator badge loads an image from a public validator
  // service; nothing on this page may leave the server.
  validatorUrl: null,
});
