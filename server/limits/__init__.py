"""Limits every server enforces together: the login throttle and the ingestion rate, with the
store (memory or Redis) that keeps their counts. Below control and ingest, which use them."""
