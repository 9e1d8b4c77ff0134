// Two versions of a diagram side by side (GET /diagrams/NAME/versions/A/compare/B): the inputs,
// boxes and outputs the newer one added, removed and changed, each change with both
// definitions; and Restore, which makes the older one the newest again (POST .../restore). A
// running diagram swaps to the restored version, and the answer's `swap` says which outputs
// kept their state (swapSummary, also shown after a save).
import * as api from "./api.js";
import { confirmDanger } from "./confirm.js";
import { el, fill, notice } from "./dom.js";

/** One sentence per output of a replaced running diagram: kept, new, or what state went. */
export function swapSummary(swap) {
  if (!swap) return "";
  const parts = [];
  if (swap.kept.length) parts.push(`${swap.kept.join(", ")} kept ${swap.kept.length > 1 ? "their" : "its"} state and missed no result`);
  if (swap.new.length) parts.push(`${swap.new.join(", ")} ${swap.new.length > 1 ? "are" : "is"} new`);
  for (const d of swap.dropped) parts.push(d.message);
  return parts.length ? ` Swapped while running: ${parts.join("; ")}.` : "";
}

const shown = (value) => (value === undefined ? "(none)" : JSON.stringify(value, null, 1));

export class VersionCompare {
  constructor(onRestored) {
    this.onRestored = onRestored;   // (name) -> opens the diagram as stored now
    this.title = el("h3", { id: "compare-title" }, "Compare");
    this.message = el("p", { class: "message", role: "status" });
    this.body = el("div", { class: "version-compare-body" });
    this.element = el("section", { class: "version-compare", "aria-labelledby": "compare-title", hidden: true },
      this.title, this.body, this.message);
  }

  hide() {
    this.element.hidden = true;
  }

  /** Show what `newer` changed since `older`, with Restore for `older`. */
  async show(name, older, newer) {
    const diff = await api.get(`/diagrams/${api.seg(name)}/versions/${older}/compare/${newer}`);
    fill(this.title, `v${older} → v${newer} of ${name}`);
    fill(this.message);
    const item = (c) => el("li", {}, el("strong", {}, `${c.part} ${c.name}`));
    const changed = (c) => el("li", {}, el("strong", {}, `${c.part} ${c.name}`),
      el("div", { class: "side-by-side" },
        el("pre", { "aria-label": `${c.name} in v${older}` }, shown(c.from)),
        el("pre", { "aria-label": `${c.name} in v${newer}` }, shown(c.to))));
    const section = (label, items, render) => (items.length
      ? [el("h4", {}, label), el("ul", { "data-kind": label.toLowerCase() }, ...items.map(render))] : []);
    const same = !diff.added.length && !diff.removed.length && !diff.changed.length;
    fill(this.body,
      ...(same ? [el("p", {}, "The two versions are the same.")] : []),
      ...section("Added", diff.added, item),
      ...section("Removed", diff.removed, item),
      ...section("Changed", diff.changed, changed),
      el("button", { type: "button", "data-action": "restore", onclick: () => this.restore(name, older) },
        `Restore v${older}`),
      el("button", { type: "button", class: "link", onclick: () => this.hide() }, "Close"));
    this.element.hidden = false;
  }

  async restore(name, version) {
    if (!(await confirmDanger(`Make v${version} of ${name} the newest version? A running diagram switches to it now.`, "Restore"))) return;
    try {
      const restored = await api.post(`/diagrams/${api.seg(name)}/versions/${version}/restore`);
      this.hide();
      await this.onRestored(name, `Restored v${version} of ${name}.${swapSummary(restored.swap)}`);
    } catch (err) {
      notice(this.message, err.message, "error");
    }
  }
}
