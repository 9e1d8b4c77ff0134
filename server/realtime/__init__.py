"""Real-time delivery: socket.io connections and events, the SecFilter per subscriber,
catalog-change notices."""
