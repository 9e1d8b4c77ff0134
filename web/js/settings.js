// Admin console, system settings: the limits an administrator may change while the server
// runs (the server lists them; each change is audited).
import * as api from "./api.js";
import { el, field, fill, notice } from "./dom.js";

export class SystemSettings {
  constructor(root) {
    this.root = root;
    this.message = el("p", { class: "notice", role: "status" });
  }

  async refresh() {
    const { settings } = await api.get("/system/settings");
    const inputs = Object.entries(settings).map(([name, value]) =>
      el("input", { type: "number", min: 1, name, value: String(value) }));
    const form = el("form", { class: "settings", "aria-label": "System settings" },
      inputs.map((input) => field(input.name.replaceAll("_", " "), input)),
      el("button", { type: "submit", class: "primary" }, "Save settings"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const changed = Object.fromEntries(inputs.filter((i) => Number(i.value) !== settings[i.name])
        .map((i) => [i.name, Number(i.value)]));
      if (!Object.keys(changed).length) {
        notice(this.message, "Nothing changed.");
        return;
      }
      try {
        await api.patch("/system/settings", changed);
        await this.refresh();
        notice(this.message, "Settings saved.", "ok");
      } catch (error) {
        notice(this.message, error.message, "error");
      }
    });
    fill(this.root, el("h2", {}, "System settings"), form, this.message);
  }
}
