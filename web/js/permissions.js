// Who holds what on objects, with grant and revoke. The catalog browser shows it for one object
// (its owner, CHANGE_PERM holders and administrators may look); the admin console shows the
// whole table. A row's actions come from the server, and so do the actions a grant may name:
// the owner row of an object lists every action that applies to it. The grant form is built
// once and only its choices follow refreshes, so a change elsewhere never wipes what is typed.
import * as api from "./api.js";
import { confirmDanger } from "./confirm.js";
import { el, field, fill, freshId, notice } from "./dom.js";

const key = (o) => `${o.type}/${o.name}`;

/** Refill a <select>, keeping its choice when that is still offered. */
function offer(control, options) {
  const kept = control.value;
  fill(control, options.map((o) => el("option", { value: o.value }, o.label)));
  if (options.some((o) => o.value === kept)) control.value = kept;
}

/**
 * @param root where to draw
 * @param load async () -> rows [{type, name, role, actions, via}]
 * @param roles role names to suggest in the grant form (empty if this session may not list them)
 */
export class PermissionPanel {
  constructor(root, load, roles = []) {
    this.load = load;
    this.targets = new Map();
    this.body = el("tbody");
    this.message = el("p", { class: "notice", role: "status" });
    this.objects = el("select", { name: "object" });
    this.actions = el("select", { name: "action" });
    this.role = el("input", { name: "role", autocomplete: "off", required: true });
    this.roleList = el("datalist", { id: freshId("roles") });
    this.role.setAttribute("list", this.roleList.id);
    this.objectField = field("Object", this.objects);
    this.objects.addEventListener("change", () => this.offerActions());
    this.form = el("form", { class: "grant inline-form", "aria-label": "Grant a permission" },
      this.objectField, field("Role", this.role), this.roleList, field("Action", this.actions),
      el("button", { type: "submit", class: "primary" }, "Grant"));
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.change("PUT", this.targets.get(this.objects.value), this.role.value.trim(), this.actions.value);
    });
    this.error = el("p", { class: "notice error", hidden: true });
    fill(root, this.error,
      this.table = el("table", { class: "permissions" },
        el("thead", {}, el("tr", {}, ["object", "role", "actions", "held as"].map((h) => el("th", { scope: "col" }, h)))),
        this.body),
      this.form, this.message);
    this.setRoles(roles);
  }

  setRoles(roles) {
    fill(this.roleList, roles.map((r) => el("option", { value: r })));
  }

  async refresh() {
    let rows;
    try {
      rows = await this.load();
      fill(this.error);
    } catch (error) {
      fill(this.error, error.message);
      rows = [];
    }
    this.error.hidden = !this.error.textContent;
    this.table.hidden = !this.error.hidden;
    fill(this.body, rows.map((r) => el("tr", {},
      el("td", {}, `${r.type} ${r.name}`), el("td", {}, r.role),
      el("td", { class: "actions" }, r.actions.map((a) => this.chip(r, a))),
      el("td", {}, r.via))));
    this.targets = new Map(rows.filter((r) => r.via === "owner").map((r) => [key(r), r]));
    offer(this.objects, [...this.targets.values()].map((t) => ({ value: key(t), label: `${t.type} ${t.name}` })));
    this.objectField.hidden = this.targets.size < 2;
    this.form.hidden = this.targets.size === 0;
    this.offerActions();
  }

  offerActions() {
    const target = this.targets.get(this.objects.value);
    offer(this.actions, (target ? target.actions : []).map((a) => ({ value: a, label: a })));
  }

  chip(row, action) {
    if (row.via === "owner") return el("span", { class: "chip" }, action);
    return el("span", { class: "chip" }, action, el("button", {
      type: "button", class: "revoke", title: "Revoke",
      "aria-label": `Revoke ${action} on ${row.type} ${row.name} from ${row.role}`,
      onclick: async () => {
        if (await confirmDanger(`Revoke ${action} on ${row.type} ${row.name} from ${row.role}?`, "Revoke")) {
          await this.change("DELETE", row, row.role, action);
        }
      },
    }, "×"));
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
