// Admin console, system settings: the limits an administrator may change while the server runs
// (the server lists them; each change is audited). A refresh updates only the fields the
// administrator has not touched.
import * as api from "./api.js";
import { el, field, fill, notice } from "./dom.js";

export class SystemSettings {
  constructor(root) {
    this.root = root;
    this.shown = null;   // setting -> the value last shown
    this.inputs = [];
    this.message = el("p", { class: "notice", role: "status" });
  }

  async refresh() {
    const { settings } = await api.get("/system/settings");
    if (!this.shown) this.build(settings);
    for (const input of this.inputs) {
      if (input.value === String(this.shown[input.name])) input.value = String(settings[input.name]);
    }
    this.shown = settings;
  }

  build(settings) {
    this.inputs = Object.keys(settings).map((name) => el("input", { type: "number", min: 1, name }));
    const form = el("form", { class: "settings", "aria-label": "System settings" },
      this.inputs.map((input) => field(input.name.replaceAll("_", " "), input)),
      el("button", { type: "submit", class: "primary" }, "Save settings"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.save();
    });
    this.shown = Object.fromEntries(Object.keys(settings).map((name) => [name, ""]));
    fill(this.root, el("h2", {}, "System settings"), form, this.message);
  }

  async save() {
    const changed = Object.fromEntries(this.inputs.filter((i) => Number(i.value) !== this.shown[i.name])
      .map((i) => [i.name, Number(i.value)]));
    if (!Object.keys(changed).length) {
      notice(this.message, "Nothing changed.");
      return;
    }
    try {
      const { settings } = await api.patch("/system/settings", changed);
      for (const input of this.inputs) input.value = String(settings[input.name]);
      this.shown = settings;
      notice(this.message, "Settings saved.", "ok");
    } catch (error) {
      notice(this.message, error.message, "error");
    }
  }
}
