// Live results: subscribe to an output the session may view and watch its tuples arrive. The
// table shows exactly what the server's SecFilter delivered to this session, each tuple with
// the input streams it derives from; a live chart draws its numeric fields over event time, and
// an output with a latitude and a longitude is also drawn on a live map of ships and tracks.
import * as api from "./api.js";
import { el, field, fill, notice, select } from "./dom.js";
import { ResultChart } from "./resultchart.js";
import { mapChoices, ShipMap } from "./shipmap.js";
import * as socket from "./socket.js";
import { TupleTable } from "./tupletable.js";

// A subscribe may start the reader's own variant of a rewritten diagram, which waits for its
// queries as a deploy does (docs/rewrite.md): the server's deploy timeout, and some.
export const SUBSCRIBE_WAIT = 130000;

export class Results {
  constructor(root) {
    this.output = null;
    this.count = 0;
    this.picker = select([], { name: "output" });
    this.message = el("p", { class: "notice", role: "status" });
    this.counter = el("span", { class: "counter", "aria-live": "off" }, "0 tuples");
    // on an output of a stream security punctuations govern: the policy of the rows arriving
    this.policy = el("p", { class: "policy", "aria-live": "polite" });
    this.table = new TupleTable();
    this.chart = new ResultChart();
    this.map = new ShipMap();
    this.mapSection = el("section", { class: "results-map", "aria-label": "Live map", hidden: true },
      el("h2", {}, "Live map"), this.map.element);
    const form = el("form", { class: "toolbar", "aria-label": "Subscribe to an output" },
      field("Output", this.picker),
      el("button", { type: "submit", class: "primary" }, "Subscribe"),
      el("button", { type: "button", onclick: () => this.unsubscribe() }, "Unsubscribe"),
      this.message);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.subscribe(this.picker.value);
    });
    fill(root, form, el("div", { class: "results-body" },
      el("section", { class: "results-table", "aria-label": "Arriving tuples" },
        el("h2", {}, "Arriving tuples ", this.counter), this.policy,
        el("div", { class: "scroll" }, this.table.element)),
      el("section", { class: "results-chart", "aria-label": "Live chart" },
        el("h2", {}, "Live chart"), this.chart.element),
      this.mapSection));
    socket.on("tuples", (data) => this.receive(data));
    socket.on("subscription_ended", (data) => this.ended(data));
    socket.on("subscription_moved", (data) => this.moved(data));
    socket.on("missed", (data) => this.catchUp(data));
    socket.on("policy", (data) => this.showPolicy(data));
    socket.on("connect", () => this.resume());
  }

  /** The outputs this session may view (subscribing may still be refused). */
  async refresh() {
    const { outputs } = await api.get("/outputs");
    const names = outputs.map((o) => o.name);
    const current = this.picker.value;
    fill(this.picker, names.map((n) => el("option", { value: n }, n)));
    if (names.includes(current)) this.picker.value = current;
    if (!names.length) notice(this.message, "There is no output you may view yet.");
  }

  async subscribe(output) {
    if (!output) return;
    if (this.output) await this.unsubscribe();
    const schema = await schemaOf(output);   // before subscribing: no tuple may wait for it
    try {
      await socket.subscribe({ output }, SUBSCRIBE_WAIT);
    } catch (error) {
      notice(this.message, error.message, "error");
      return;
    }
    this.output = output;
    this.schema = schema;
    this.next = null;
    this.log = null;
    this.count = 0;
    this.table.clear();
    this.chart.start(schema, null);
    this.mapSection.hidden = true;
    if (schema) this.startMap(Object.entries(schema.fields));
    this.counter.textContent = "0 tuples";
    this.policy.textContent = "";
    notice(this.message, `Subscribed to ${output}; tuples appear as they arrive.`, "ok");
  }

  async unsubscribe() {
    if (!this.output) return;
    const output = this.output;
    this.output = null;
    try {
      await socket.unsubscribe(output);
      notice(this.message, `Unsubscribed from ${output}.`);
    } catch (error) {
      notice(this.message, error.message, "error");
    }
  }

  /** After a reconnection (a network blip, a server restart): subscribe again from the last
   * position seen, in the result log it was seen in, so the server sends what was produced
   * meanwhile, then live results. A redeploy that dropped the output's state started a new
   * log (refused: RESULTS_RESTARTED): this page has seen none of it, so it reads it from its
   * start. */
  async resume() {
    if (!this.output) return;
    const output = this.output;
    const from = (position, log) => socket.call("subscribe",
      position === null ? { output } : { output, from: position, log }, SUBSCRIBE_WAIT);
    try {
      try {
        await from(this.next, this.log);
        notice(this.message, `Reconnected to ${output}; nothing was missed.`, "ok");
      } catch (error) {
        if (error.code !== "RESULTS_RESTARTED") throw error;
        await from(0, error.details.log);
        notice(this.message, `Reconnected to ${output}, which was redeployed afresh meanwhile: its results start again, all shown.`, "ok");
      }
    } catch (error) {
      notice(this.message, `Reconnected, but: ${error.message}`, "error");
    }
  }

  /** The server's delivery skipped positions [from, to): read them back over REST. */
  async catchUp({ output, from, to }) {
    let at = from;
    while (output === this.output && at < to) {
      // whole batches: a limit of at most to - at rows ends the read at or before `to`
      const limit = Math.min(to - at, 10000);
      const read = await api.get(`/outputs/${api.seg(output)}/results?from=${at}&limit=${limit}`);
      this.show(read.tuples);
      if (read.next === at) break;
      at = read.next;
    }
  }

  receive({ output, tuples, next, log }) {
    if (output !== this.output) return;
    if (next !== undefined) [this.next, this.log] = [next, log];
    this.show(tuples);
  }

  /** The security policy of the rows that follow: which of this session's roles it lets
   * read them (the server names no other role). */
  showPolicy({ output, roles }) {
    if (output !== this.output) return;
    this.policy.textContent = `Security policy of the arriving rows: readable by your roles ${roles.join(", ")}`;
  }

  show(tuples) {
    if (!this.schema && !this.table.columns.length && tuples.length) {   // types from the first tuple
      this.chart.start(null, tuples[0]);
      this.startMap(entriesOf(tuples[0]));
    }
    this.table.add(tuples);
    this.chart.add(tuples);
    if (!this.mapSection.hidden) this.map.add(tuples);
    this.count += tuples.length;
    this.counter.textContent = `${this.count} tuples`;
  }

  /** Show the live map when the output's fields [[name, type], ...] have a position (its
   * coastline and the user's port are drawn when they have loaded; positions at once). */
  startMap(entries) {
    const choices = mapChoices(entries);
    if (!choices) return;
    this.mapSection.hidden = false;   // before Leaflet measures its area
    this.map.start(choices.fields, choices.texts);
  }

  /** A change of policies or attributes moved the subscription to another result log
   * (docs/rewrite.md): positions of the old one mean nothing there. */
  moved({ output }) {
    if (output !== this.output) return;
    this.next = null;
    this.log = null;
    notice(this.message, `The policies changed: ${output} now shows what they allow you.`, "ok");
  }

  ended({ output, error }) {
    if (output !== this.output) return;
    this.output = null;
    notice(this.message, `Your subscription to ${output} ended: ${error.message}`, "error");
  }
}

/** The output's schema (its fields' types and event time), or null if not known yet. */
export async function schemaOf(output) {
  try {
    return (await api.get(`/outputs/${api.seg(output)}`)).schema || null;
  } catch {
    return null;
  }
}

/** A tuple's fields as [[name, type]], for an output whose schema is not known. */
export function entriesOf(tuple) {
  return Object.entries(tuple).map(([k, v]) => [k, typeof v === "string" ? "string" : typeof v]);
}
