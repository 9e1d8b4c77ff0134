// Admin console, users and roles: create, disable or enable, reset a password, and say who may
// play which role. The forms are built once; refreshes redraw only the tables and the role
// choices, so a change made elsewhere never wipes what an administrator is typing.
import * as api from "./api.js";
import { confirmDanger } from "./confirm.js";
import { el, field, fill, notice, select } from "./dom.js";

export class Accounts {
  constructor(usersRoot, rolesRoot) {
    this.roles = [];
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
    const [{ users }, { roles }] = await Promise.all([api.get("/users"), api.get("/roles")]);
    this.roles = roles;
    fill(this.users, users.map((u) => this.userRow(u)));
    fill(this.roleRows, roles.map((r) => el("tr", { "data-role": r },
      el("td", {}, r),
      el("td", {}, users.filter((u) => u.roles.includes(r)).map((u) => u.name).join(", ")),
      el("td", {}, el("button", {
        type: "button", class: "danger", "aria-label": `Delete role ${r}`,
        onclick: () => this.act(`Deleted role ${r}.`, () => api.del(`/roles/${api.seg(r)}`), this.roleMessage,
          `Delete role ${r}? Its grants and the objects it owns go with it.`),
      }, "Delete")))));
    const checked = new Set([...this.newRoles.querySelectorAll("input:checked")].map((b) => b.value));
    fill(this.newRoles, roles.map((r) => el("label", { class: "check" },
      el("input", { type: "checkbox", value: r, name: "roles", checked: checked.has(r) }), " ", r)));
  }

  userRow(user) {
    const seg = api.seg(user.name);
    const missing = this.roles.filter((r) => !user.roles.includes(r));
    const pick = select(missing, { name: "role", "aria-label": `Role to give ${user.name}` });
    const password = el("input", { type: "password", name: "new-password", autocomplete: "new-password", "aria-label": `New password for ${user.name}` });
    return el("tr", { "data-user": user.name },
      el("td", {}, user.name),
      el("td", {}, user.enabled ? "enabled " : "disabled ",
        el("button", { type: "button", onclick: () => this.act(`${user.enabled ? "Disabled" : "Enabled"} ${user.name}.`,
          () => api.patch(`/users/${seg}`, { enabled: !user.enabled })) }, user.enabled ? "Disable" : "Enable")),
      el("td", {}, user.roles.map((r) => el("span", { class: "chip" }, r, el("button", {
        type: "button", class: "revoke", "aria-label": `Take role ${r} from ${user.name}`,
        onclick: () => this.act(`${user.name} no longer plays ${r}.`, () => api.del(`/users/${seg}/roles/${api.seg(r)}`),
          this.message, `Take role ${r} from ${user.name}?`),
      }, "×"))),
      missing.length ? el("span", { class: "inline-form" }, pick, el("button", {
        type: "button", onclick: () => this.act(`${user.name} may now play ${pick.value}.`, () => api.put(`/users/${seg}/roles/${api.seg(pick.value)}`)),
      }, "Add role")) : null),
      el("td", {}, el("span", { class: "inline-form" }, password, el("button", {
        type: "button", onclick: () => this.act(`Password of ${user.name} reset; their sessions ended.`,
          () => api.patch(`/users/${seg}`, { password: password.value })),
      }, "Reset"))),
      el("td", {}, el("button", {
        type: "button", class: "danger", "aria-label": `Delete user ${user.name}`,
        onclick: () => this.act(`Deleted ${user.name}.`, () => api.del(`/users/${seg}`), this.message,
          `Delete user ${user.name}? Their sessions end and they can no longer log in.`),
      }, "Delete")));
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
      this.act(`Created ${name.value}.`, async () => {
        await api.post("/users", { name: name.value.trim(), password: password.value, roles });
        form.reset();
      });
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

  /** Do a change (after the user confirms it, when `question` is given), redraw, say how it went. */
  async act(done, change, message = this.message, question = null) {
    if (question && !(await confirmDanger(question, "Delete"))) return;
    try {
      await change();
      await this.refresh();
      notice(message, done, "ok");
    } catch (error) {
      notice(message, error.message, "error");
    }
  }
}
