// The page's one socket.io connection. It authenticates with the session cookie plus the CSRF
// token (a cross-site page could make the browser send the cookie, but cannot read the token).
import { io } from "/static/vendor/socket.io/socket.io.esm.min.js";

let socket = null;
const handlers = new Map();   // event -> Set of listeners, kept across reconnections
const held = new Map();       // output -> how many views hold its subscription on this socket

export function connect(csrf) {
  disconnect();
  held.clear();
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

/** A view subscribes to an output ({output}, as the subscribe event takes it). Views of one
 * output (the live results, a dashboard's table and chart of it) share the socket's one
 * subscription: the last to let go (`unsubscribe`) ends it. */
export async function subscribe(request, wait) {
  const answer = await call("subscribe", request, wait);
  held.set(request.output, (held.get(request.output) || 0) + 1);
  return answer;
}

export async function unsubscribe(output) {
  const others = (held.get(output) || 0) - 1;
  if (others > 0) {
    held.set(output, others);
    return { unsubscribed: output };
  }
  held.delete(output);
  return call("unsubscribe", { output });
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

on("subscription_ended", ({ output }) => held.delete(output));   // the server ended it for every view
