"""Real-time delivery: socket.io connections and events, the SecFilter per audience,
catalog-change notices."""
