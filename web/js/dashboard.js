// The dashboard page: several outputs at once, each a table, a chart or a map (panel.js), fed by
// the page's subscriptions (feeds.js). A user's named dashboards are kept by the server (/dashboards, each
// user's own) and saved at every change, so a reload or the next login finds them as they were.
import * as api from "./api.js";
import { capabilities } from "./capabilities.js";
import { confirmDanger } from "./confirm.js";
import { el, field, fill, notice, select } from "./dom.js";
import { Panel, viewPicker } from "./panel.js";
import * as feeds from "./feeds.js";

const FIRST = "main";      // the dashboard every user starts with (stored with its first panel)
const MAX_PANELS = 12;     // as the server allows

export class Dashboard {
  constructor(root) {
    this.name = null;
    this.panels = [];
    this.saved = new Map();   // name -> panels, as last stored
    this.saving = Promise.resolve();   // one PUT at a time, in the order of the changes
    this.picker = select([], { name: "dashboard", onchange: () => this.show(this.picker.value) });
    this.newName = el("input", { name: "dashboard-name", maxLength: 64, placeholder: "ships", autocomplete: "off" });
    this.outputPicker = select([], { name: "panel-output" });
    this.viewPicker = viewPicker({ name: "panel-view-new" });
    this.message = el("p", { class: "notice", role: "status" });
    this.grid = el("div", { class: "dash-grid" });
    const create = el("form", { class: "toolbar", "aria-label": "New dashboard" },
      field("New dashboard", this.newName), el("button", { type: "submit" }, "Create"));
    create.addEventListener("submit", (event) => {
      event.preventDefault();
      this.create(this.newName.value.trim());
    });
    const add = el("form", { class: "toolbar", "aria-label": "Add a panel" },
      field("Output", this.outputPicker), field("View", this.viewPicker),
      el("button", { type: "submit", class: "primary" }, "Add panel"));
    add.addEventListener("submit", (event) => {
      event.preventDefault();
      this.add(this.outputPicker.value, this.viewPicker.value);
    });
    fill(root, el("div", { class: "toolbar" }, field("Dashboard", this.picker),
      el("button", { type: "button", onclick: () => this.drop() }, "Delete dashboard")),
    create, add, this.message, this.grid);
    this.listeners = {
      tuples: ({ output, tuples }) => this.each(output, (p) => p.receive(tuples)),
      ended: ({ output, error }) => this.each(output, (p) => p.ended(error)),
    };
    for (const [event, listener] of Object.entries(this.listeners)) feeds.on(event, listener);
  }

  each(output, act) {
    for (const panel of this.panels) if (panel.output === output) act(panel);
  }

  /** The outputs this session may subscribe to; the first time, the user's dashboards; then,
   * panels refused before try again (the catalog changed). */
  async refresh() {
    const { outputs } = await api.get("/outputs");
    const mayRead = await Promise.all(outputs.map(({ name }) => capabilities({ type: "output", name })
      .then((may) => may("outputs.results"), () => false)));
    const names = outputs.map((o) => o.name).filter((_, i) => mayRead[i]);
    const current = this.outputPicker.value;
    fill(this.outputPicker, names.map((n) => el("option", { value: n }, n)));
    if (names.includes(current)) this.outputPicker.value = current;
    if (!names.length) notice(this.message, "There is no output you may subscribe to yet.");
    if (this.name === null) await this.load();
    else await Promise.all(this.panels.map((p) => p.retry()));
  }

  async load() {
    const { dashboards } = await api.get("/dashboards");
    this.saved = new Map(dashboards.map((d) => [d.name, d.panels]));
    if (!this.saved.size) this.saved.set(FIRST, []);
    await this.show([...this.saved.keys()][0]);
  }

  async show(name) {
    this.closePanels();
    this.name = name;
    fill(this.picker, [...this.saved.keys()].map((n) => el("option", { value: n }, n)));
    this.picker.value = name;
    this.panels = this.saved.get(name).map((spec) => this.newPanel(spec));
    fill(this.grid, this.panels.map((p) => p.element));
    await Promise.all(this.panels.map((p) => p.open()));
  }

  newPanel(spec) {
    return new Panel(spec, { changed: () => this.save(), remove: (panel) => this.remove(panel) });
  }

  async add(output, view) {
    if (!output) return;
    if (this.panels.length >= MAX_PANELS) {
      notice(this.message, `A dashboard holds at most ${MAX_PANELS} panels.`, "error");
      return;
    }
    const panel = this.newPanel({ output, view });
    this.panels.push(panel);
    this.grid.append(panel.element);
    this.save();
    await panel.open();
  }

  remove(panel) {
    panel.close();
    panel.element.remove();
    this.panels = this.panels.filter((p) => p !== panel);
    this.save();
  }

  /** Store the dashboard as it is now; saves run one after another, so the last change wins. */
  save() {
    const name = this.name;
    const panels = this.panels.map((p) => p.spec());
    this.saved.set(name, panels);
    this.saving = this.saving.then(async () => {
      try {
        await api.put(`/dashboards/${api.seg(name)}`, { panels });
        notice(this.message, `Dashboard ${name} saved.`, "ok");
      } catch (error) {
        notice(this.message, `Dashboard ${name} was not saved: ${error.message}`, "error");
      }
    });
    return this.saving;
  }

  async create(name) {
    if (!name) return;
    if (this.saved.has(name)) {
      await this.show(name);
      return;
    }
    try {
      await api.put(`/dashboards/${api.seg(name)}`, { panels: [] });
    } catch (error) {
      notice(this.message, error.message, "error");
      return;
    }
    this.saved.set(name, []);
    this.newName.value = "";
    await this.show(name);
    notice(this.message, `Dashboard ${name} created; add its panels.`, "ok");
  }

  async drop() {
    const name = this.name;
    if (!(await confirmDanger(`Delete the dashboard ${name} and its ${this.panels.length} panels?`, "Delete"))) return;
    await this.saving;
    try {
      await api.del(`/dashboards/${api.seg(name)}`);
    } catch (error) {
      if (error.status !== 404) {   // one never stored (an empty first one) is simply gone
        notice(this.message, error.message, "error");
        return;
      }
    }
    this.saved.delete(name);
    if (!this.saved.size) this.saved.set(FIRST, []);
    await this.show([...this.saved.keys()][0]);
    notice(this.message, `Dashboard ${name} deleted.`, "ok");
  }

  closePanels() {
    this.panels.forEach((p) => p.close());
    this.panels = [];
  }

  /** Logging out: let go of the subscriptions and the socket's events. */
  close() {
    this.closePanels();
    for (const [event, listener] of Object.entries(this.listeners)) feeds.off(event, listener);
  }
}
