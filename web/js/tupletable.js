// A live table of an output's tuples, newest first: exactly what the server's SecFilter
// delivered to this session, each tuple with the input streams it derives from (and its level,
// on an output of a diagram at a level). The live results page and every dashboard table use it.
import { el, fill } from "./dom.js";

const MAX_ROWS = 200;
const SOURCES = "_sources";
const LEVEL = "_level";
const HIDDEN = "_hidden";   // fields the provider's security policy hides from this session

export class TupleTable {
  constructor() {
    this.head = el("thead");
    this.body = el("tbody");
    this.element = el("table", { class: "tuples" }, this.head, this.body);
    this.clear();
  }

  /** A new output: no columns until its first tuple names them. */
  clear() {
    this.columns = [];
    this.levelled = false;
    fill(this.head);
    fill(this.body);
  }

  add(tuples) {
    if (!this.columns.length && tuples.length) this.setColumns(tuples[0]);
    for (const tuple of tuples) {
      const hidden = tuple[HIDDEN] || [];
      this.body.prepend(el("tr", {}, this.columns.map((c) => hidden.includes(c)
        ? el("td", { class: "withheld", title: "hidden from your roles by the data's security policy" }, "hidden")
        : el("td", {}, cell(tuple[c]))),
        el("td", { class: "sources" }, (tuple[SOURCES] || []).join(", ")),
        this.levelled ? el("td", { class: "level" }, levelText(tuple[LEVEL])) : null));
    }
    while (this.body.rows.length > MAX_ROWS) this.body.lastElementChild.remove();
  }

  setColumns(first) {
    this.columns = Object.keys(first).filter((k) => k !== SOURCES && k !== LEVEL && k !== HIDDEN);
    this.levelled = LEVEL in first;
    fill(this.head, el("tr", {}, this.columns.map((c) => el("th", { scope: "col" }, c)),
      el("th", { scope: "col" }, "sources"), this.levelled ? el("th", { scope: "col" }, "level") : null));
  }
}

/** A level as "banks: A, oil: T", or "public" when every class is ⊥. */
function levelText(level) {
  const entries = Object.entries(level || {});
  return entries.length ? entries.map(([coi, entry]) => `${coi}: ${entry}`).join(", ") : "public";
}

function cell(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}
