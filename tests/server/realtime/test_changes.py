"""Open pages learn of every catalog change through one ``catalog_changed`` socket event."""

from __future__ import annotations

import queue

from catalog import Action, ObjectType
from server.realtime.changes import EVENT, ChangeNotices


def test_a_grant_is_announced_with_a_counter_only(app, template):
    """The event names no object, role or user: pages refetch what they may see."""
    catalog = app.extensions["sluice"].catalog
    joe = catalog.sessions.login("joe", template[1]["joe"])[1]
    heard: queue.Queue = queue.Queue()
    notices = ChangeNotices(lambda event, data: heard.put((event, data)))
    catalog.on_change(notices.signal)
    notices.start()
    try:
        catalog.grants.grant(joe, "CUSTOMER2", Action.VIEW_OBJECT, ObjectType.STREAM, "in1")
        assert heard.get(timeout=10) == (EVENT, {"version": 1})
    finally:
        notices.stop()


def test_the_app_wires_notices_to_the_socket_server(app):
    assert isinstance(app.extensions["sluice"].changes, ChangeNotices)
