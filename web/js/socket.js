// The page's one socket.io connection. It authenticates with the session cookie plus the CSRF
// token (a cross-site page could make the browser send the cookie, but cannot read the token).
import { io } from "/static/vendor/socket.io/socket.io.esm.min.js";

let socket = null;
const handlers = new Map();   // event -> Set of listeners, kept across reconnections

export function connect(csrf) {
  disconnect();
  socket = io({ auth: { csrf }, transports: ["websocket"] });
  for (const [event, set] of handlers) set.forEach((f) => socket.on(event, f));
  return socket;
}

export function disconnect() {
  if (socket) socket.disconnect();
  socket = null;
}

export function on(event, listener) {
  if (!handlers.has(event)) handlers.set(event, new Set());
  handlers.get(event).add(listener);
  if (socket) socket.on(event, listener);
}

export function off(event, listener) {
  handlers.get(event)?.delete(listener);
  if (socket) socket.off(event, listener);
}

/** Emit and wait for the ack (`wait` ms at most); an {error} ack rejects with the server's
 * message. */
export function call(event, payload, wait = 10000) {
  return new Promise((resolve, reject) => {
    if (!socket) {
      reject(new Error("not connected to the server"));
      return;
    }
    socket.timeout(wait).emit(event, payload, (timeout, answer) => {
      if (timeout) reject(new Error("the server did not answer in time"));
      else if (answer && answer.error) reject(Object.assign(new Error(answer.error.message), answer.error));
      else resolve(answer);
    });
  });
}
