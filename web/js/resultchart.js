// The live results' chart: an output's measures over its event time (UTC), or over the arrival
// time when it has none; never its identifiers (measures.js). An output with several tuples per
// time (an aggregate's groups, ships, patients) draws one line per group: "One line per" picks
// the identifier or text field that names them.
import { TimeChart } from "./charts.js";
import { el, field, fill, pick, select } from "./dom.js";
import { chartFields } from "./measures.js";

const KEEP = 1000;      // tuples kept for redrawing when the choice of lines changes
const MAX_LINES = 8;    // groups beyond those first seen are left out (a note says so)

export class ResultChart {
  /** `onchange()` is called when the user picks other lines (a dashboard saves the choice). */
  constructor(onchange = () => {}) {
    this.chart = new TimeChart("Measures", { utc: true, capacity: KEEP, height: 220 });
    const picked = () => { this.redraw(); onchange(); };
    this.fieldPicker = select([], { name: "chart-field", onchange: picked });
    this.splitPicker = select([], { name: "chart-split", onchange: picked });
    this.note = el("p", { class: "hint", "aria-live": "polite" });   // the page has its own status
    this.element = el("div", { class: "result-chart" },
      el("div", { class: "chart-choices" },
        field("Field", this.fieldPicker), field("One line per", this.splitPicker)),
      this.chart.element, this.note);
    this.start(null, null);
  }

  /** A new output: its schema (or, unknown, the first tuple's types) says what can be drawn. */
  start(schema, first) {
    this.kept = [];
    this.lines = [];
    this.timeField = schema?.event_time || null;
    const entries = schema ? Object.entries(schema.fields)
      : Object.entries(first || {}).map(([k, v]) => [k, typeof v === "number" ? "double" : typeof v]);
    const { measures, splits } = chartFields(entries);
    fill(this.fieldPicker, el("option", { value: "" }, "all measures"),
      measures.map((n) => el("option", { value: n }, n)));
    fill(this.splitPicker, el("option", { value: "" }, "field"), splits.map((n) => el("option", { value: n }, n)));
    // grouped results: one field per group reads better than every field jumbled together
    this.fieldPicker.value = splits.length && measures.length ? measures[0] : "";
    this.splitPicker.value = splits[0] || "";
    this.numeric = measures;
    this.redraw();
  }

  /** The user's choices, {field, split} ("" for all measures, or no split), to keep; `choose`
   * gives them back, each only if the output still offers it. */
  choices() {
    return { field: this.fieldPicker.value, split: this.splitPicker.value };
  }

  choose({ field, split } = {}) {
    const changed = [pick(this.fieldPicker, field), pick(this.splitPicker, split)];
    if (changed.some(Boolean)) this.redraw();
  }

  /** New tuples, as they arrive. */
  add(tuples) {
    const arrival = Date.now() / 1000;
    const timed = tuples.map((t) => [this.timeField ? seconds(t[this.timeField]) : arrival, t]);
    this.kept.push(...timed);
    if (this.kept.length > KEEP) this.kept.splice(0, this.kept.length - KEEP);
    const lines = this.linesOf(this.kept);
    if (keys(lines) !== keys(this.lines)) this.redraw();
    else this.chart.add(timed.map(([time, t]) => [time, this.values(t)]));
  }

  /** Draw the kept tuples again with the lines the pickers choose. */
  redraw() {
    this.lines = this.linesOf(this.kept);
    const time = this.timeField ? `${this.timeField} (UTC)` : "arrival time (UTC)";
    const split = this.splitPicker.value;
    const what = this.fieldPicker.value || "Measures";
    this.chart.reset(this.lines.map((l) => l.label), time, split ? `${what} per ${split}` : what);
    this.chart.add(this.kept.map(([at, t]) => [at, this.values(t)]));
    const groups = split ? this.groups(this.kept, Infinity).length : 0;
    const shown = new Set(this.lines.map((l) => l.group)).size;
    this.note.textContent = groups > shown ? `Showing the first ${shown} of ${groups} ${split} values.` : "";
  }

  fields() {
    return this.fieldPicker.value ? [this.fieldPicker.value] : this.numeric;
  }

  /** The distinct values of the split field, in the order first seen. */
  groups(kept, most) {
    const split = this.splitPicker.value;
    const seen = new Set();
    for (const [, t] of kept) {
      if (seen.size >= most) break;
      seen.add(String(t[split] ?? ""));
    }
    return [...seen];
  }

  /** Each line: the field it draws and the group it keeps (if split), with its legend label. */
  linesOf(kept) {
    const fields = this.fields();
    if (!this.splitPicker.value) return fields.map((f) => ({ field: f, group: null, label: f }));
    const lines = [];
    for (const group of this.groups(kept, Math.max(1, Math.floor(MAX_LINES / fields.length)))) {
      for (const f of fields) lines.push({ field: f, group, label: fields.length === 1 ? group : `${f} ${group}` });
    }
    return lines;
  }

  /** A tuple's values by line label (only its group's lines, when split). */
  values(tuple) {
    const split = this.splitPicker.value;
    const out = {};
    for (const line of this.lines) {
      if (line.group === null || String(tuple[split] ?? "") === line.group) out[line.label] = tuple[line.field];
    }
    return out;
  }
}

function keys(lines) {
  return lines.map((l) => `${l.field}\t${l.group}`).join("\n");
}

/** An ISO-8601 time as the server sends it (UTC when it names no offset) in epoch seconds. */
function seconds(text) {
  if (typeof text !== "string") return NaN;
  return Date.parse(/(Z|[+-]\d\d:\d\d)$/.test(text) ? text : `${text}Z`) / 1000;
}
