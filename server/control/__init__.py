"""The control path between the API and the runtime: the app's services, and a stored diagram's
way to a running query."""
