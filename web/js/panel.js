// One panel of a dashboard: an output shown as a table, a chart or a map, fed by the page's
// subscription to it (feeds.js: views of one output share it, across reconnections). A panel
// whose output the session may not subscribe to (any more) says so, and tries again when the
// catalog changes; it never shows what the server did not deliver to this session.
import { el, fill, notice, select } from "./dom.js";
import { ResultChart } from "./resultchart.js";
import * as feeds from "./feeds.js";
import { entriesOf, schemaOf } from "./results.js";
import { mapChoices, ShipMap } from "./shipmap.js";
import { TupleTable } from "./tupletable.js";

export const VIEWS = { table: "Table", chart: "Chart", map: "Map" };
const VIEW_OPTIONS = Object.entries(VIEWS).map(([value, label]) => ({ value, label }));

export function viewPicker(attrs) {
  return select(VIEW_OPTIONS, attrs);
}

export class Panel {
  /** `spec` as the server keeps it ({output, view, options}); `changed()` after the user
   * changes what to keep, `remove(panel)` when asked to go. */
  constructor({ output, view, options }, { changed, remove }) {
    this.output = output;
    this.view = VIEWS[view] ? view : "table";
    this.options = options || {};
    this.changed = changed;
    this.subscribed = false;
    this.refused = false;
    this.started = false;
    this.drawing = null;
    this.picker = viewPicker({ name: "panel-view", "aria-label": `View of ${output}`,
      onchange: () => this.switchTo(this.picker.value) });
    this.picker.value = this.view;
    this.status = el("p", { class: "notice", role: "status" });
    this.body = el("div", { class: "panel-body" });
    this.element = el("article", { class: "dash-panel", "data-output": output, "aria-label": `Panel of ${output}` },
      el("header", { class: "panel-head" }, el("h3", {}, output), this.picker,
        el("button", { type: "button", "aria-label": `Remove the panel of ${output}`, onclick: () => remove(this) }, "Remove")),
      this.status, this.body);
  }

  /** What the server keeps of this panel. */
  spec() {
    const options = this.started && this.drawing.choices ? this.drawing.choices() : this.options;
    return { output: this.output, view: this.view, options };
  }

  async open() {
    this.schema = await schemaOf(this.output);   // before subscribing: no tuple may wait for it
    try {
      await feeds.subscribe(this.output);
    } catch (error) {
      this.refuse(`You may not subscribe to ${this.output} now: ${error.message}`);
      return;
    }
    this.subscribed = true;
    this.refused = false;
    this.element.dataset.state = "live";
    this.draw();
  }

  /** Try again, if refused before (the catalog changed: a right may have come back). */
  async retry() {
    if (this.refused) await this.open();
  }

  ended(error) {
    this.refuse(`Your subscription to ${this.output} ended: ${error.message}`);
  }

  refuse(text) {
    this.options = this.spec().options;   // kept while the panel waits for its output
    this.started = false;
    this.subscribed = false;
    this.refused = true;
    this.element.dataset.state = "refused";
    this.drawing = null;
    fill(this.body);
    notice(this.status, text, "error");
  }

  close() {
    if (this.subscribed) feeds.unsubscribe(this.output).catch(() => {});
    this.subscribed = false;
  }

  switchTo(view) {
    this.view = view;
    this.options = {};
    if (this.subscribed) this.draw();
    this.changed();
  }

  /** A new drawing of the current view; it starts once the output's fields are known. */
  draw() {
    this.started = false;
    this.count = 0;
    const keep = () => this.changed();
    this.drawing = { table: () => new TupleTable(), chart: () => new ResultChart(keep), map: () => new ShipMap(keep) }[this.view]();
    fill(this.body, this.view === "table" ? el("div", { class: "scroll" }, this.drawing.element) : this.drawing.element);
    notice(this.status, `Subscribed to ${this.output}; tuples appear as they arrive.`, "ok");
    if (this.schema) this.begin(null);
  }

  /** Start the chart or the map from the schema, or (not known) the first tuple's fields. */
  begin(first) {
    this.started = true;
    if (this.view === "chart") this.drawing.start(this.schema, first);
    if (this.view === "map") {
      const choices = mapChoices(this.schema ? Object.entries(this.schema.fields) : entriesOf(first));
      if (!choices) {
        notice(this.status, `${this.output} has no latitude and longitude to draw on a map; choose a table or a chart.`, "error");
        return;
      }
      this.drawing.start(choices.fields, choices.texts);
    }
    if (this.drawing.choose) this.drawing.choose(this.options);
  }

  receive(tuples) {
    if (!this.subscribed || !this.drawing || !tuples.length) return;
    if (!this.started) this.begin(tuples[0]);
    this.drawing.add(tuples);
    this.count += tuples.length;
    this.element.dataset.tuples = String(this.count);
  }
}
