"""HTTP plumbing: the REST blueprints, the access guard, security headers and CSRF, the error
shape, the OpenAPI description."""
