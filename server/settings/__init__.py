"""Configuration: the layered settings a server starts with (frozen), the limits an administrator
may change while it runs, and logging."""
