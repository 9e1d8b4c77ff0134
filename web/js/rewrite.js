// What access-control policies added to a deployed diagram (GET /diagrams/NAME's `rewrite`,
// docs/rewrite.md), beside the editor: the filters, projections and widened windows its deployer's
// policies put in, with the policies behind each, and why it was stopped once its rewrite went
// stale. The stored document stays the user's own query; this shows what actually runs.
import { el, fill } from "./dom.js";

function line(added) {
  const policies = added.policies ? ` (${added.policies.join(", ")})` : "";
  if (added.where !== undefined) return `${added.operator}: ${added.box} keeps ${added.where}${policies}`;
  if (added.fields) return `${added.operator}: ${added.box} keeps ${added.fields.join(", ")}`;
  if (added.window) return `${added.operator}: ${added.box}'s window ${added.window.from.size}/${added.window.from.slide} → ${added.window.to.size}/${added.window.to.slide}${policies}`;
  if (added.within) return `${added.operator}: ${added.box} within ${added.within.from} → ${added.within.to}${policies}`;
  return `${added.operator}: ${added.box}${policies}`;
}

export class RewriteNote {
  constructor() {
    this.title = el("h2", { id: "rewrite-title" }, "Added by policies");
    this.body = el("ul", { class: "rewrite-list" });
    this.stale = el("p", { class: "notice error" });
    this.element = el("section", { class: "rewrite", "aria-labelledby": "rewrite-title", hidden: true },
      this.title, this.stale, this.body);
  }

  /** Show a described diagram's rewrite (none: hidden). */
  show(diagram) {
    const rewrite = diagram && diagram.rewrite;
    this.element.hidden = !rewrite;
    if (!rewrite) return;
    fill(this.title, `Added by ${rewrite.deployer}'s policies`);
    this.stale.hidden = !rewrite.stale;
    fill(this.stale, rewrite.stale ? `Stopped: ${rewrite.stale}` : "");
    fill(this.body, rewrite.added.map((a) => el("li", {}, line(a))));
  }
}
