// Admin console, Chinese-Wall levels: conflict-of-interest classes and their companies, the company
// of each input stream (or public, or multilevel: each tuple takes its sender's organisation), each
// user's organisation and each role's clearance. Every change is one audited request; the server
// checks everything again (a company of another class in a clearance is refused there).
import * as api from "./api.js";
import { confirmDanger } from "./confirm.js";
import { el, fill, notice, savingForm, select, table } from "./dom.js";

const PUBLIC = "(public)";
const MULTILEVEL = "(multilevel)";
const NONE = "⊥";

export class LevelsPanel {
  constructor(root) {
    this.root = root;
    this.message = el("p", { class: "notice", role: "status" });
    this.config = null;
    this.sent = null;   // the title of the form whose request is on its way
  }

  async refresh() {
    this.config = await api.get("/levels");
    const [streams, users, roles] = await Promise.all([
      api.get("/streams"), api.get("/users"), api.get("/roles")]);
    this.render(streams.streams.filter((s) => s.kind === "input").map((s) => s.name),
      users.users.map((u) => u.name), roles.roles);
  }

  async act(request, done) {
    try {
      await request();
      await this.refresh();   // the forms are built again: say so only once they are there
      notice(this.message, done, "ok");
    } catch (error) {
      notice(this.message, error.message, "error");
    } finally {
      this.sent = null;
    }
  }

  /** What the administrator has typed or chosen in each form, by form and field. */
  typed() {
    const values = new Map();
    for (const form of this.root.querySelectorAll("form")) {
      if (form.getAttribute("aria-label") === this.sent) continue;   // just saved: start afresh
      for (const control of form.elements) {
        if (control.name) values.set(`${form.getAttribute("aria-label")}/${control.name}`, control.value);
      }
    }
    return values;
  }

  /** Put back what was typed, where the control (and, in a list, the option) still exists: the
   * panel is built again whenever the catalog changes, which must not undo a form half filled. */
  restore(values) {
    for (const form of this.root.querySelectorAll("form")) {
      for (const control of form.elements) {
        const value = values.get(`${form.getAttribute("aria-label")}/${control.name}`);
        if (value === undefined) continue;
        if (control.tagName !== "SELECT" || [...control.options].some((o) => o.value === value)) {
          control.value = value;
        }
      }
    }
  }

  render(streams, users, roles) {
    const typed = this.typed();
    const { classes, clearances, organisations } = this.config;
    const companies = classes.flatMap((c) => c.companies);
    const rows = classes.map((c) => [c.name, c.companies.map((name) => el("span", { class: "company" }, name,
      el("button", { type: "button", class: "danger", "aria-label": `Drop company ${name}`,
        onclick: () => this.drop(`/levels/companies/${api.seg(name)}`, `company ${name}`) }, "×"))),
    el("button", { type: "button", class: "danger", onclick: () => this.drop(`/levels/classes/${api.seg(c.name)}`, `class ${c.name}`) }, "Drop")]);
    fill(this.root, el("h2", {}, "Security levels"),
      table(["Conflict-of-interest class", "Companies", ""], rows, "Classes and their companies"),
      this.form("Add a class", [["Class", el("input", { name: "name", required: true })]],
        ({ name }) => api.post("/levels/classes", { name }), "Class added."),
      this.form("Add a company", [["Class", select(classes.map((c) => c.name), { name: "coi" })],
        ["Company", el("input", { name: "name", required: true })]],
      ({ coi, name }) => api.post(`/levels/classes/${api.seg(coi)}/companies`, { name }), "Company added."),
      this.form("Company of a stream", [["Stream", select(streams, { name: "stream" })],
        ["Company", select([PUBLIC, MULTILEVEL, ...companies], { name: "company" })]],
      ({ stream, company }) => api.put(`/levels/streams/${api.seg(stream)}`,
        company === MULTILEVEL ? { multilevel: true } : { company: company === PUBLIC ? null : company }),
      "Stream level set."),
      this.form("Organisation of a user", [["User", select(users, { name: "user" })],
        ["Organisation", select([PUBLIC, ...companies], { name: "organisation" })]],
      ({ user, organisation }) => api.put(`/levels/users/${api.seg(user)}`,
        { organisation: organisation === PUBLIC ? null : organisation }), "Organisation set."),
      this.form("Clearance of a role", [["Role", select(roles, { name: "role" })],
        ...classes.map((c) => [c.name, select([NONE, "T", ...c.companies], { name: `coi:${c.name}` })])],
      (values) => api.put(`/levels/roles/${api.seg(values.role)}`, { clearance: Object.fromEntries(
        classes.map((c) => [c.name, values[`coi:${c.name}`]]).filter(([, v]) => v !== NONE)) }),
      "Clearance set; deliveries follow it from the next batch."),
      table(["Stream", "Level"], Object.entries(this.config.streams).map(([s, l]) =>
        [s, l.multilevel ? "multilevel" : l.company]), "Streams with a company"),
      table(["User", "Organisation"], Object.entries(organisations), "Organisations"),
      table(["Role", "Clearance"], Object.entries(clearances).map(([r, l]) =>
        [r, Object.entries(l).map(([k, v]) => `${k}: ${v}`).join(", ") || "public only"]), "Clearances"),
      this.message);
    this.restore(typed);
  }

  form(title, fields, send, done) {
    return savingForm(title, fields, (values) => {
      this.sent = title;
      this.act(() => send(values), done);
    });
  }

  async drop(path, what) {
    if (!(await confirmDanger(`Drop ${what}? Its label bit is never given again.`, "Drop"))) return;
    await this.act(() => api.del(path), `Dropped ${what}.`);
  }
}
