"""The edge: the process that holds the sockets, so the Spark driver's process does not.

``sluice serve`` starts the app (gunicorn, its threads, Spark) on a private Unix socket and an
edge process (``server.edge.process``, asyncio) on the public address. The edge answers
engine.io itself (handshake, heartbeats, WebSocket and polling) and passes every other request
to the app; socket.io packets travel between the two over one channel
(``server.edge.frames``), where the app's python-socketio server sees each edge-held socket
as its own (``server.edge.link``). An idle socket costs the edge a few kilobytes and the app
nothing; a result batch crosses the channel once per audience room, however many sockets it has.
"""
