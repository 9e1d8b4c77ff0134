// The catalog browser: the objects this session may view, their owners, and, for an object
// whose permissions the session may see (its capabilities say so), who holds what (with grant
// and revoke for its owner).
import * as api from "./api.js";
import { capabilities } from "./capabilities.js";
import { el, fill, KeptRows, table } from "./dom.js";
import { PermissionPanel } from "./permissions.js";

export class CatalogBrowser {
  constructor(root) {
    this.body = el("tbody");
    this.rows = new KeptRows(this.body, (o) => this.row(o));
    this.detail = el("section", { class: "detail", "aria-live": "polite" },
      el("p", { class: "hint" }, "Choose an object to see its permissions."));
    this.panel = null;
    this.search = el("input", { type: "search", placeholder: "name, type or owner",
      "aria-label": "Search the catalog", autocomplete: "off", spellcheck: false });
    this.search.addEventListener("input", () => this.filter());
    this.count = el("p", { class: "hint", "aria-live": "polite" });
    fill(root, el("div", { class: "split" },
      el("section", { "aria-labelledby": "catalog-title" },
        el("h2", { id: "catalog-title" }, "Objects you may view"),
        el("div", { class: "catalog-search" }, this.search, this.count),
        el("table", { class: "objects" },
          el("thead", {}, el("tr", {}, ["type", "name", "kind", "owner", "owner role", "source"].map((h) => el("th", { scope: "col" }, h)))),
          this.body)),
      this.detail));
  }

  async refresh() {
    const { objects } = await api.get("/catalog");
    this.rows.show(objects);
    this.filter();
    if (this.panel) await this.panel.refresh();
  }

  row(o) {
    return el("tr", { "data-object": `${o.type}/${o.name}` },
      el("td", {}, o.type),
      el("td", {}, el("button", { type: "button", class: "link", onclick: () => this.open(o) }, o.name)),
      el("td", {}, o.kind || ""), el("td", {}, o.owner.user), el("td", {}, o.owner.role),
      el("td", {}, o.source_index ?? ""));
  }

  /** Show the rows whose type, name, kind or owner contains every word typed (any case). */
  filter() {
    const words = this.search.value.toLowerCase().split(/\s+/).filter(Boolean);
    const rows = [...this.body.rows];
    let shown = 0;
    for (const row of rows) {
      const text = [...row.cells].map((c) => c.textContent).join(" ").toLowerCase();
      row.hidden = !words.every((w) => text.includes(w));
      if (!row.hidden) shown += 1;
    }
    this.count.textContent = words.length ? `${shown} of ${rows.length} objects` : "";
  }

  async open(object) {
    const root = el("div");
    const fields = object.type === "schema" ? await schemaFields(object.name) : null;
    const may = await capabilities(object);
    fill(this.detail, fields, el("h2", {}, `Permissions on ${object.type} ${object.name}`), root);
    if (!may("permissions.of")) {   // asked, not tried: trying would audit a denial
      this.panel = null;
      fill(root, el("p", { class: "notice" },
        "Only this object's owner, holders of CHANGE_PERM on it and administrators may see its permissions."));
      return;
    }
    this.panel = new PermissionPanel(root, async () =>
      (await api.get(`/permissions/${api.seg(object.type)}/${api.seg(object.name)}`)).permissions);
    return this.panel.refresh();
  }
}

/** A schema's fields as a table (VIEW_OBJECT is enough to see them). */
async function schemaFields(name) {
  const { schema } = await api.get(`/schemas/${api.seg(name)}`);
  const rows = Object.entries(schema.fields).map(([field, type]) =>
    [field, type, field === schema.event_time ? "event time" : ""]);
  return el("section", { class: "schema-fields", "aria-label": `Fields of schema ${name}` },
    el("h2", {}, `Schema ${name}`), table(["field", "type", ""], rows));
}
