"""Configuration: the layered settings a server starts with and the limits an administrator may change while it runs."""
