"""The fuzz tests: a package, so that the demo server they share ends with them."""
