// The stored versions of the diagram the canvas holds (GET /diagrams/NAME/versions), beside the
// editor: one per save, newest first. Opening one draws it on the canvas as an edit of the
// stored diagram, so Save stores it again as the newest version: that is how one is restored.
// Compare shows an older version beside the newest, with Restore (compare.js).
import * as api from "./api.js";
import { VersionCompare } from "./compare.js";
import { el, fill } from "./dom.js";

export class VersionList {
  constructor(onOpen, onRestored) {
    this.onOpen = onOpen;   // (name, version, document) -> draws it
    this.name = null;
    this.body = el("ol", { class: "version-list" });
    this.title = el("h2", { id: "versions-title" }, "Versions");
    this.compare = new VersionCompare(onRestored);
    this.element = el("section", { class: "versions", "aria-labelledby": "versions-title", hidden: true },
      this.title, this.body, this.compare.element);
  }

  /** Show the versions of `name` (null: the canvas holds no stored diagram, nothing to show). */
  async show(name) {
    this.name = name;
    this.element.hidden = name === null;
    this.compare.hide();
    if (name === null) return;
    const { versions } = await api.get(`/diagrams/${api.seg(name)}/versions`);
    if (this.name !== name) return;   // another diagram was opened meanwhile
    fill(this.title, `Versions of ${name}`);
    fill(this.body, versions.map((v, i) => el("li", { "data-version": v.version },
      el("button", { type: "button", class: "link", onclick: () => this.open(name, v.version) },
        `v${v.version}`),
      " ", el("span", { class: "hint" },
        `${new Date(v.saved_at * 1000).toLocaleString()} by ${v.saved_by}${i === 0 ? " (stored now)" : ""}`),
      ...(i === 0 ? [] : [" ", el("button", { type: "button", class: "link", "data-action": "compare",
        onclick: () => this.compare.show(name, v.version, versions[0].version) }, "compare")]))));
  }

  async open(name, version) {
    const answer = await api.get(`/diagrams/${api.seg(name)}/versions/${version}`);
    this.onOpen(name, version, answer.document || {});
  }
}
