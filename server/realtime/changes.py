"""Tell open pages that the catalog changed, so they refetch what they show.

Every connected socket gets ``catalog_changed {version}`` after each change (a grant, a new
diagram, a disabled user...). The event carries only a counter, never what changed: each page
asks the API again, and the API answers with what that session may see now. Catalog
listeners run in the changing thread and must only signal, so a small thread does the emit;
changes that arrive while it emits are folded into one event.
"""

from __future__ import annotations

import threading

from flask_socketio import SocketIO

EVENT = "catalog_changed"


class ChangeNotices:
    def __init__(self, emit) -> None:
        """``emit(event, data)`` sends to every connected socket."""
        self.emit = emit
        self.version = 0
        self._changed = threading.Event()
        self._stopped = threading.Event()

    def signal(self) -> None:
        self._changed.set()

    def run(self) -> None:
        while True:
            self._changed.wait()
            if self._stopped.is_set():
                return
            self._changed.clear()
            self.version += 1
            self.emit(EVENT, {"version": self.version})

    def start(self) -> None:
        threading.Thread(target=self.run, name="catalog-notices", daemon=True).start()

    def stop(self) -> None:
        self._stopped.set()
        self._changed.set()


def notices(socketio: SocketIO, namespace: str) -> ChangeNotices:
    """The notices for the sockets of ``socketio`` (started by ``init_app``)."""
    return ChangeNotices(lambda event, data: socketio.emit(event, data, namespace=namespace))


def init_app(svc) -> ChangeNotices:
    """Tell the sockets of every catalog change from now on."""
    svc.catalog.on_change(svc.changes.signal)
    svc.changes.start()
    return svc.changes
