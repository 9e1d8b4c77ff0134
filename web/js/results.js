// Live results: subscribe to an output the session may view and watch its tuples arrive. The
// table shows exactly what the server's SecFilter delivered to this session, each tuple with
// the input streams it derives from; a live chart draws its numeric fields over event time, and
// an output with a latitude and a longitude is also drawn on a live map of ships and tracks.
import * as api from "./api.js";
import { el, field, fill, notice, select } from "./dom.js";
import { ResultChart } from "./resultchart.js";
import { mapChoices, ShipMap } from "./shipmap.js";
import * as feeds from "./feeds.js";
import * as socket from "./socket.js";
import { TupleTable } from "./tupletable.js";

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
    feeds.on("tuples", (data) => this.receive(data));
    feeds.on("ended", (data) => this.ended(data));
    feeds.on("moved", (data) => this.moved(data));
    feeds.on("resumed", (data) => this.resumed(data));
    socket.on("policy", (data) => this.showPolicy(data));
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
      await feeds.subscribe(output);
    } catch (error) {
      notice(this.message, error.message, "error");
      return;
    }
    this.output = output;
    this.schema = schema;
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
      await feeds.unsubscribe(output);
      notice(this.message, `Unsubscribed from ${output}.`);
    } catch (error) {
      notice(this.message, error.message, "error");
    }
  }

  /** After a reconnection (a network blip, a server restart) the feed subscribed again from
   * the last position seen: what was produced meanwhile arrives as tuples. */
  resumed({ output, restarted }) {
    if (output !== this.output) return;
    notice(this.message, restarted
      ? `Reconnected to ${output}, which was redeployed afresh meanwhile: its results start again, all shown.`
      : `Reconnected to ${output}; nothing was missed.`, "ok");
  }

  receive({ output, tuples }) {
    if (output === this.output) this.show(tuples);
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
