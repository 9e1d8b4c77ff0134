// Admin console, audit log: every permission change, login and denial, newest first, a page at
// a time, filtered by user, event, object, outcome and time. Pages follow the server's cursor
// (before_id), so entries arriving meanwhile never shift a page already seen; each entry's
// details are shown whole.
import * as api from "./api.js";
import { el, field, fill, notice, select } from "./dom.js";

export const PAGE = 50;

export class AuditLog {
  constructor(root) {
    this.filters = {
      user: el("input", { name: "user", autocomplete: "off" }),
      event: el("input", { name: "event", autocomplete: "off", placeholder: "grant" }),
      object: el("input", { name: "object", autocomplete: "off", placeholder: "stream:in1" }),
      allowed: select([{ value: "", label: "any" }, { value: "true", label: "allowed" }, { value: "false", label: "denied" }], { name: "allowed" }),
      since: el("input", { name: "since", type: "datetime-local", step: 1 }),
      until: el("input", { name: "until", type: "datetime-local", step: 1 }),
    };
    this.cursors = [null];   // the before_id of each page up to the one shown (null: the newest)
    this.next = null;        // the cursor of the page after the one shown, if there is one
    this.message = el("p", { class: "notice", role: "status" });
    this.body = el("tbody");
    this.newer = el("button", { type: "button", disabled: true, onclick: () => this.turn(-1) }, "Newer");
    this.older = el("button", { type: "button", disabled: true, onclick: () => this.turn(1) }, "Older");
    const form = el("form", { class: "inline-form", "aria-label": "Filter the audit log" },
      field("User", this.filters.user), field("Event", this.filters.event),
      field("Object", this.filters.object), field("Outcome", this.filters.allowed),
      field("From", this.filters.since), field("Until", this.filters.until),
      el("button", { type: "submit", class: "primary" }, "Filter"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.cursors = [null];
      this.refresh();
    });
    fill(root, el("h2", {}, "Audit log"), form, this.message,
      el("div", { class: "scroll" }, el("table", { class: "audit" },
        el("thead", {}, el("tr", {}, ["time", "user", "roles", "event", "object", "outcome", "reason", "details"].map((h) => el("th", { scope: "col" }, h)))),
        this.body)),
      el("nav", { class: "pager", "aria-label": "Audit pages" }, this.newer, this.older));
  }

  /** The page `step` pages older (1) or newer (-1) than the one shown. */
  turn(step) {
    if (step > 0) this.cursors.push(this.next);
    else this.cursors.pop();
    return this.refresh();
  }

  /** The query of the page shown: the filters, the page size, its cursor. */
  query() {
    const query = new URLSearchParams({ limit: String(PAGE) });
    for (const name of ["user", "event", "object", "allowed"]) {
      const value = this.filters[name].value.trim();
      if (value) query.set(name, value);
    }
    for (const name of ["since", "until"]) {
      const value = this.filters[name].value;
      if (value) query.set(name, String(new Date(value).getTime() / 1000));
    }
    const cursor = this.cursors.at(-1);
    if (cursor !== null) query.set("before_id", String(cursor));
    return query;
  }

  async refresh() {
    try {
      const { entries, next_before_id: next } = await api.get(`/audit?${this.query()}`);
      this.next = next;
      fill(this.body, entries.map((e) => el("tr", {},
        el("td", {}, new Date(e.at * 1000).toLocaleString()), el("td", {}, e.user || ""),
        el("td", {}, e.roles.join(", ")), el("td", {}, e.event), el("td", {}, e.object || ""),
        el("td", { class: e.allowed ? "ok" : "denied" }, e.allowed ? "allowed" : "denied"),
        el("td", {}, e.reason), el("td", { class: "details" }, details(e.details)))));
      this.newer.disabled = this.cursors.length === 1;
      this.older.disabled = next === null;
      const first = (this.cursors.length - 1) * PAGE + 1;
      notice(this.message, entries.length
        ? `Entries ${first} to ${first + entries.length - 1}, newest first${next === null ? "; no older entries." : "."}`
        : "No entries.");
    } catch (error) {
      notice(this.message, error.message, "error");
    }
  }
}

/** {role: "CUSTOMER2", needs: ["ADD on the system"]} -> one line a key, each value whole (a
 * failed login's attempted name is shown here too, as text like every other value). */
function details(values) {
  return Object.entries(values || {}).map(([key, value]) =>
    el("div", {}, el("span", { class: "detail-key" }, key), " ",
      typeof value === "object" ? JSON.stringify(value) : String(value)));
}
