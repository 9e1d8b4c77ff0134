// The page's subscriptions to outputs, shared by its views (the live results, a dashboard's
// panels) and kept across reconnections. One server subscription per output, however many
// views show it: the last view to let go ends it. The feed remembers the last position it was
// sent (and the result log it was in), so after a reconnection it subscribes again from there
// and the server sends what was produced meanwhile; positions delivery skipped (`missed`) are
// read back over REST. Views hear of rows only through `on("tuples")`, so every view of an
// output gets the same rows, caught up or live.
import * as api from "./api.js";
import * as socket from "./socket.js";

// A subscribe may start the reader's own variant of a rewritten diagram, which waits for its
// queries as a deploy does (docs/rewrite.md): the server's deploy timeout, and some.
const SUBSCRIBE_WAIT = 130000;
const READ_BACK_LIMIT = 10000;

const feeds = new Map();       // output -> {views, next, log, asked}
const listeners = new Map();   // event -> Set of listeners

/** Listen to `tuples` ({output, tuples}), `ended` ({output, error}: the server ended the
 * subscription, or could not renew it after a reconnection), `moved` ({output}: the
 * policies changed what it shows) or `resumed` ({output, restarted}: renewed after a
 * reconnection; `restarted` when the output's results started again meanwhile). */
export function on(event, listener) {
  if (!listeners.has(event)) listeners.set(event, new Set());
  listeners.get(event).add(listener);
}

export function off(event, listener) {
  listeners.get(event)?.delete(listener);
}

function tell(event, data) {
  listeners.get(event)?.forEach((listener) => listener(data));
}

/** A view wants the output's rows; rejects with the server's refusal. */
export async function subscribe(output) {
  let feed = feeds.get(output);
  if (!feed) {
    feed = { views: 0, next: null, log: null, asked: ask(output, null, null) };
    feeds.set(output, feed);
  }
  try {
    await feed.asked;
  } catch (error) {
    if (feeds.get(output) === feed) feeds.delete(output);
    throw error;
  }
  feed.views += 1;
}

export async function unsubscribe(output) {
  const feed = feeds.get(output);
  if (!feed) return;
  feed.views -= 1;
  if (feed.views > 0) return;
  feeds.delete(output);
  await socket.call("unsubscribe", { output });
}

/** Logging out: the next user's socket holds none of these. */
export function forget() {
  feeds.clear();
}

function ask(output, from, log) {
  return socket.call("subscribe", from === null ? { output } : { output, from, log }, SUBSCRIBE_WAIT);
}

/** After a reconnection the server holds no subscription of this socket's: ask again from the
 * last position seen, in the log it was seen in. A redeploy that dropped the output's state
 * started a new log (refused: RESULTS_RESTARTED): none of it was seen, so read it from 0. */
async function resume(output, feed) {
  try {
    try {
      await ask(output, feed.next, feed.log);
      tell("resumed", { output, restarted: false });
    } catch (error) {
      if (error.code !== "RESULTS_RESTARTED") throw error;
      await ask(output, 0, error.details.log);
      tell("resumed", { output, restarted: true });
    }
  } catch (error) {
    feeds.delete(output);
    tell("ended", { output, error });
  }
}

/** Read positions [from, to) back over REST, in whole batches (a limit of at most to - at rows
 * ends a read at or before `to`). */
async function readBack({ output, from, to }) {
  let at = from;
  while (feeds.has(output) && at < to) {
    const read = await api.get(`/outputs/${api.seg(output)}/results?from=${at}&limit=${Math.min(to - at, READ_BACK_LIMIT)}`);
    tell("tuples", { output, tuples: read.tuples });
    if (read.next === at) break;
    at = read.next;
  }
}

socket.on("tuples", (data) => {
  const feed = feeds.get(data.output);
  if (!feed) return;
  if (data.next !== undefined) [feed.next, feed.log] = [data.next, data.log];
  tell("tuples", data);
});
socket.on("missed", (data) => {
  if (!feeds.has(data.output)) return;
  readBack(data).catch((error) => {   // a gap is never shown as if there were none
    feeds.delete(data.output);
    socket.call("unsubscribe", { output: data.output }).catch(() => {});
    tell("ended", { output: data.output, error: new Error(`rows ${data.from} to ${data.to} could not be read back: ${error.message}`) });
  });
});
socket.on("subscription_moved", (data) => {
  const feed = feeds.get(data.output);
  if (!feed) return;
  [feed.next, feed.log] = [null, null];   // positions of the old log mean nothing in the new
  tell("moved", data);
});
socket.on("subscription_ended", (data) => {
  feeds.delete(data.output);
  tell("ended", data);
});
socket.on("connect", () => feeds.forEach((feed, output) => resume(output, feed)));
