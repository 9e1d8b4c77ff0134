// Who holds what on objects, with grant and revoke. The catalog browser shows it for one object
// (its owner, CHANGE_PERM holders and administrators may look); the admin console shows the
// whole table. A row's actions come from the server, so are the actions a grant may name: the
// owner row of an object lists every action that applies to it.
import * as api from "./api.js";
import { el, field, fill, freshId, notice, select } from "./dom.js";

const key = (o) => `${o.type}/${o.name}`;

/**
 * @param root where to draw
 * @param load async () -> rows [{type, name, role, actions, via}]
 * @param roles role names to suggest in the grant form (empty if this session may not list them)
 */
export class PermissionPanel {
  constructor(root, load, roles = []) {
    this.root = root;
    this.load = load;
    this.roles = roles;
    this.message = el("p", { class: "notice", role: "status" });
  }

  async refresh() {
    let rows;
    try {
      rows = await this.load();
    } catch (error) {
      fill(this.root, el("p", { class: "notice error" }, error.message));
      return;
    }
    const targets = new Map(rows.filter((r) => r.via === "owner").map((r) => [key(r), r]));
    fill(this.root,
      el("table", { class: "permissions" },
        el("thead", {}, el("tr", {}, ["object", "role", "actions", "held as"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, rows.map((r) => el("tr", {},
          el("td", {}, `${r.type} ${r.name}`), el("td", {}, r.role),
          el("td", { class: "actions" }, r.actions.map((a) => this.chip(r, a))),
          el("td", {}, r.via))))),
      targets.size ? this.grantForm(targets) : null,
      this.message);
  }

  chip(row, action) {
    if (row.via === "owner") return el("span", { class: "chip" }, action);
    return el("span", { class: "chip" }, action, el("button", {
      type: "button", class: "revoke", title: "Revoke",
      "aria-label": `Revoke ${action} on ${row.type} ${row.name} from ${row.role}`,
      onclick: () => this.change("DELETE", row, row.role, action),
    }, "×"));
  }

  grantForm(targets) {
    const objects = select([...targets.values()].map((t) => ({ value: key(t), label: `${t.type} ${t.name}` })), { name: "object" });
    const actions = select([], { name: "action" });
    const showActions = () => fill(actions, targets.get(objects.value).actions.map((a) => el("option", { value: a }, a)));
    objects.addEventListener("change", showActions);
    showActions();
    const listId = freshId("roles");
    const role = el("input", { name: "role", list: listId, autocomplete: "off", required: true });
    const form = el("form", { class: "grant inline-form", "aria-label": "Grant a permission" },
      targets.size > 1 ? field("Object", objects) : null,
      field("Role", role), el("datalist", { id: listId }, this.roles.map((r) => el("option", { value: r }))),
      field("Action", actions),
      el("button", { type: "submit", class: "primary" }, "Grant"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.change("PUT", targets.get(objects.value), role.value.trim(), actions.value);
    });
    return form;
  }

  async change(method, object, role, action) {
    const path = `/permissions/${api.seg(object.type)}/${api.seg(object.name)}/${api.seg(role)}/${api.seg(action)}`;
    try {
      await api.request(method, path);
      await this.refresh();
      const done = method === "PUT" ? `Granted ${action} on ${object.name} to ${role}.`
        : `Revoked ${action} on ${object.name} from ${role}.`;
      notice(this.message, done, "ok");
    } catch (error) {
      notice(this.message, error.message, "error");
    }
  }
}
