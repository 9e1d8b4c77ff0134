"""The Sluice server: REST API, websocket subscriptions, ingestion and the Spark runner."""
