// Admin console, system settings: the limits an administrator may change while the server runs
// (the server lists them with their configured values; each change is audited and kept across
// restarts until it is reset). A refresh updates only the fields the administrator has not touched.
import * as api from "./api.js";
import { el, field, fill, notice } from "./dom.js";

export class SystemSettings {
  constructor(root) {
    this.root = root;
    this.shown = null;   // setting -> the value last shown
    this.inputs = [];
    this.status = new Map();   // setting -> {hint, reset}: whether it is the configured value
    this.message = el("p", { class: "notice", role: "status" });
  }

  async refresh() {
    const answer = await api.get("/system/settings");
    if (!this.shown) this.build(answer.settings);
    for (const input of this.inputs) {
      if (input.value === String(this.shown[input.name])) input.value = String(answer.settings[input.name]);
    }
    this.show(answer);
  }

  build(settings) {
    this.inputs = Object.keys(settings).map((name) => el("input", { type: "number", min: 1, name }));
    const fields = this.inputs.map((input) => {
      const reset = el("button", { type: "button", class: "reset", hidden: true,
        "aria-label": `Reset ${input.name.replaceAll("_", " ")} to its configured value`,
        onclick: () => this.save({ [input.name]: null }) }, "Reset");
      const wrap = field(input.name.replaceAll("_", " "), input, " ");
      this.status.set(input.name, { hint: wrap.querySelector(".hint"), reset });
      return el("div", { class: "setting" }, wrap, reset);
    });
    const form = el("form", { class: "settings", "aria-label": "System settings" }, fields,
      el("button", { type: "submit", class: "primary" }, "Save settings"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.save(this.changed());
    });
    this.shown = Object.fromEntries(Object.keys(settings).map((name) => [name, ""]));
    fill(this.root, el("h2", {}, "System settings"), form, this.message);
  }

  /** Remember what is in force; say per field whether it is the configured value. */
  show({ settings, configured }) {
    this.shown = settings;
    for (const input of this.inputs) {
      const own = settings[input.name] === configured[input.name];
      const { hint, reset } = this.status.get(input.name);
      hint.textContent = own ? "the configured value"
        : `changed by an administrator; configured value ${configured[input.name]}`;
      reset.hidden = own;
    }
  }

  changed() {
    return Object.fromEntries(this.inputs.filter((i) => Number(i.value) !== this.shown[i.name])
      .map((i) => [i.name, Number(i.value)]));
  }

  async save(changes) {
    if (!Object.keys(changes).length) {
      notice(this.message, "Nothing changed.");
      return;
    }
    try {
      const answer = await api.patch("/system/settings", changes);
      for (const input of this.inputs) input.value = String(answer.settings[input.name]);
      this.show(answer);
      notice(this.message, "Settings saved.", "ok");
    } catch (error) {
      notice(this.message, error.message, "error");
    }
  }
}
