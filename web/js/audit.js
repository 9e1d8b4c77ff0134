// Admin console, audit log: every permission change, login and denial, newest first, filtered
// by user, event, object and outcome.
import * as api from "./api.js";
import { el, field, fill, notice, select } from "./dom.js";

export class AuditLog {
  constructor(root) {
    this.filters = {
      user: el("input", { name: "user", autocomplete: "off" }),
      event: el("input", { name: "event", autocomplete: "off" }),
      object: el("input", { name: "object", autocomplete: "off", placeholder: "stream:in1" }),
      allowed: select([{ value: "", label: "any" }, { value: "true", label: "allowed" }, { value: "false", label: "denied" }], { name: "allowed" }),
    };
    this.message = el("p", { class: "notice", role: "status" });
    this.body = el("tbody");
    const form = el("form", { class: "inline-form", "aria-label": "Filter the audit log" },
      field("User", this.filters.user), field("Event", this.filters.event),
      field("Object", this.filters.object), field("Outcome", this.filters.allowed),
      el("button", { type: "submit", class: "primary" }, "Filter"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.refresh();
    });
    fill(root, el("h2", {}, "Audit log"), form, this.message,
      el("div", { class: "scroll" }, el("table", { class: "audit" },
        el("thead", {}, el("tr", {}, ["time", "user", "roles", "event", "object", "outcome", "reason", "details"].map((h) => el("th", { scope: "col" }, h)))),
        this.body)));
  }

  async refresh() {
    const query = new URLSearchParams({ limit: "100" });
    for (const [name, control] of Object.entries(this.filters)) if (control.value.trim()) query.set(name, control.value.trim());
    try {
      const { entries } = await api.get(`/audit?${query}`);
      fill(this.body, entries.map((e) => el("tr", {},
        el("td", {}, new Date(e.at * 1000).toLocaleString()), el("td", {}, e.user || ""),
        el("td", {}, e.roles.join(", ")), el("td", {}, e.event), el("td", {}, e.object || ""),
        el("td", { class: e.allowed ? "ok" : "denied" }, e.allowed ? "allowed" : "denied"),
        el("td", {}, e.reason), el("td", { class: "details" }, details(e.details)))));
      notice(this.message, entries.length === 1 ? "1 entry." : `${entries.length} entries.`);
    } catch (error) {
      notice(this.message, error.message, "error");
    }
  }
}

/** {role: "CUSTOMER2", action: "READ_TUPLE"} -> "role CUSTOMER2, action READ_TUPLE" (a failed
 * login's attempted name is shown here too, as text like every other value). */
function details(values) {
  return Object.entries(values || {}).map(([key, value]) =>
    `${key} ${typeof value === "object" ? JSON.stringify(value) : value}`).join(", ");
}
