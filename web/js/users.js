// Admin console, users and roles: create, disable or enable, reset a password, and say who may
// play which role. The forms are built once; refreshes redraw only the tables and the role
// choices, so a change made elsewhere never wipes what an administrator is typing. Nothing that
// hands out power or locks someone out happens in one click: a role is chosen, never preset, and
// giving an administering role (one holding CHANGE_SYSTEM) or disabling a user asks first.
import * as api from "./api.js";
import { confirmDanger } from "./confirm.js";
import { el, field, fill, notice, select } from "./dom.js";

export class Accounts {
  constructor(usersRoot, rolesRoot) {
    this.roles = [];
    this.administering = new Set();   // roles holding CHANGE_SYSTEM on the system
    this.message = el("p", { class: "notice", role: "status" });
    this.roleMessage = el("p", { class: "notice", role: "status" });
    this.users = el("tbody");
    this.roleRows = el("tbody");
    this.newRoles = el("div");
    const heads = (names) => el("thead", {}, el("tr", {}, names.map((h) => el("th", { scope: "col" }, h))));
    fill(usersRoot, el("h2", {}, "Users"), this.message,
      el("table", { class: "users" }, heads(["user", "state", "roles", "password", ""]), this.users),
      this.createForm());
    fill(rolesRoot, el("h2", {}, "Roles"), this.roleMessage,
      el("table", { class: "roles" }, heads(["role", "played by", ""]), this.roleRows),
      this.roleForm());
  }

  async refresh() {
    const [{ users }, { roles }, { permissions }] = await Promise.all([
      api.get("/users"), api.get("/roles"), api.get("/permissions")]);
    this.roles = roles;
    this.administering = new Set(permissions.filter((p) => p.type === "system"
      && p.actions.includes("CHANGE_SYSTEM")).map((p) => p.role));
    fill(this.users, users.map((u) => this.userRow(u)));
    fill(this.roleRows, roles.map((r) => el("tr", { "data-role": r },
      el("td", {}, r),
      el("td", {}, users.filter((u) => u.roles.includes(r)).map((u) => u.name).join(", ")),
      el("td", {}, el("button", {
        type: "button", class: "danger", "aria-label": `Delete role ${r}`,
        onclick: () => this.act(`Deleted role ${r}.`, () => api.del(`/roles/${api.seg(r)}`), this.roleMessage,
          [`Delete role ${r}? Its grants and the objects it owns go with it.`, "Delete"]),
      }, "Delete")))));
    const checked = new Set([...this.newRoles.querySelectorAll("input:checked")].map((b) => b.value));
    fill(this.newRoles, roles.map((r) => el("label", { class: "check" },
      el("input", { type: "checkbox", value: r, name: "roles", checked: checked.has(r) }), " ", r)));
  }

  userRow(user) {
    const seg = api.seg(user.name);
    const missing = this.roles.filter((r) => !user.roles.includes(r));
    const pick = select([{ value: "", label: "choose a role" }, ...missing],
      { name: "role", "aria-label": `Role to give ${user.name}` });
    const give = el("button", { type: "button", disabled: true, onclick: () => this.give(user, pick.value) }, "Add role");
    pick.addEventListener("change", () => { give.disabled = !pick.value; });
    const password = el("input", { type: "password", name: "new-password", autocomplete: "new-password", "aria-label": `New password for ${user.name}` });
    const toggle = user.enabled
      ? () => this.act(`Disabled ${user.name}.`, () => api.patch(`/users/${seg}`, { enabled: false }), this.message,
        [`Disable ${user.name}? Their sessions end and they cannot log in until enabled again.`, "Disable"])
      : () => this.act(`Enabled ${user.name}.`, () => api.patch(`/users/${seg}`, { enabled: true }));
    return el("tr", { "data-user": user.name },
      el("td", {}, user.name),
      el("td", {}, user.enabled ? "enabled " : "disabled ",
        el("button", { type: "button", onclick: toggle }, user.enabled ? "Disable" : "Enable")),
      el("td", {}, user.roles.map((r) => el("span", { class: "chip" }, r, el("button", {
        type: "button", class: "revoke", "aria-label": `Take role ${r} from ${user.name}`,
        onclick: () => this.act(`${user.name} no longer plays ${r}.`, () => api.del(`/users/${seg}/roles/${api.seg(r)}`),
          this.message, [`Take role ${r} from ${user.name}?`, "Take role"]),
      }, "×"))),
      missing.length ? el("span", { class: "inline-form" }, pick, give) : null),
      el("td", {}, el("span", { class: "inline-form" }, password, el("button", {
        type: "button", onclick: () => this.act(`Password of ${user.name} reset; their sessions ended.`,
          () => api.patch(`/users/${seg}`, { password: password.value })),
      }, "Reset"))),
      el("td", {}, el("button", {
        type: "button", class: "danger", "aria-label": `Delete user ${user.name}`,
        onclick: () => this.act(`Deleted ${user.name}.`, () => api.del(`/users/${seg}`), this.message,
          [`Delete user ${user.name}? Their sessions end and they can no longer log in.`, "Delete"]),
      }, "Delete")));
  }

  /** Let `user` play `role`, asking first when the role administers the system. */
  give(user, role) {
    return this.act(`${user.name} may now play ${role}.`,
      () => api.put(`/users/${api.seg(user.name)}/roles/${api.seg(role)}`), this.message,
      this.administering.has(role) ? this.administeringQuestion(user.name, [role]) : null);
  }

  /** [question, verb] before `name` gets administering `roles`. */
  administeringQuestion(name, roles) {
    const list = roles.join(", ");
    return [`Give ${name} ${list}? ${roles.length > 1 ? "They administer" : "It administers"} the system: users, roles, every grant and the audit log.`,
      `Give ${list}`];
  }

  createForm() {
    const name = el("input", { name: "name", autocomplete: "off", required: true });
    const password = el("input", { name: "password", type: "password", autocomplete: "new-password", required: true });
    const form = el("form", { class: "inline-form", "aria-label": "Create a user" },
      el("h3", {}, "Create a user"), field("Name", name), field("Password", password),
      el("fieldset", { class: "roles" }, el("legend", {}, "Roles"), this.newRoles),
      el("button", { type: "submit", class: "primary" }, "Create user"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const roles = [...this.newRoles.querySelectorAll("input:checked")].map((b) => b.value);
      const powerful = roles.filter((r) => this.administering.has(r));
      this.act(`Created ${name.value}.`, async () => {
        await api.post("/users", { name: name.value.trim(), password: password.value, roles });
        form.reset();
      }, this.message, powerful.length ? this.administeringQuestion(name.value.trim(), powerful) : null);
    });
    return form;
  }

  roleForm() {
    const name = el("input", { name: "role-name", autocomplete: "off", required: true });
    const form = el("form", { class: "inline-form", "aria-label": "Add a role" },
      field("New role", name), el("button", { type: "submit", class: "primary" }, "Add role"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.act(`Added role ${name.value}.`, async () => {
        await api.post("/roles", { name: name.value.trim() });
        form.reset();
      }, this.roleMessage);
    });
    return form;
  }

  /** Do a change (after the user confirms it, when `ask` = [question, verb] is given), redraw,
   * say how it went. */
  async act(done, change, message = this.message, ask = null) {
    if (ask && !(await confirmDanger(...ask))) return;
    try {
      await change();
      await this.refresh();
      notice(message, done, "ok");
    } catch (error) {
      notice(message, error.message, "error");
    }
  }
}
