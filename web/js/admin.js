// The admin console: users, roles, every permission (grant and revoke), security levels, access
// policies, the audit log, the system settings and the runtime, one tab each. Shown only to sessions
// whose capabilities (capabilities.js) include listing users.
import * as api from "./api.js";
import { AuditLog } from "./audit.js";
import { el, fill } from "./dom.js";
import { LevelsPanel } from "./levels.js";
import { PermissionPanel } from "./permissions.js";
import { PoliciesPanel } from "./policies.js";
import { RuntimePanel } from "./runtime.js";
import { SystemSettings } from "./settings.js";
import { Accounts } from "./users.js";

const TABS = ["Users", "Roles", "Permissions", "Levels", "Policies", "Audit", "Settings", "Runtime"];

export class AdminConsole {
  constructor(root) {
    const panes = Object.fromEntries(TABS.map((t) => [t, el("section", { class: "tab-pane", id: `admin-${t.toLowerCase()}`, role: "tabpanel" })]));
    this.accounts = new Accounts(panes.Users, panes.Roles);
    this.permissions = new PermissionPanel(panes.Permissions,
      async () => (await api.get("/permissions")).permissions, this.accounts.roles);
    this.levels = new LevelsPanel(panes.Levels);
    this.policies = new PoliciesPanel(panes.Policies);
    this.audit = new AuditLog(panes.Audit);
    this.settings = new SystemSettings(panes.Settings);
    this.runtime = new RuntimePanel(panes.Runtime);
    this.tabs = TABS.map((t) => el("button", {
      type: "button", role: "tab", "data-tab": t, onclick: () => this.show(t),
    }, t));
    fill(root, el("div", { class: "tabs", role: "tablist", "aria-label": "Admin console" }, this.tabs),
      Object.values(panes));
    this.panes = panes;
    this.show("Users");
  }

  show(tab) {
    this.current = tab;
    for (const button of this.tabs) button.setAttribute("aria-selected", String(button.dataset.tab === tab));
    for (const [name, pane] of Object.entries(this.panes)) pane.hidden = name !== tab;
    if (tab === "Runtime") this.runtime.refresh().catch((error) => console.error(error));
  }

  async refresh() {
    await this.accounts.refresh();
    this.permissions.setRoles(this.accounts.roles);
    await Promise.all([this.permissions.refresh(), this.levels.refresh(), this.policies.refresh(),
      this.audit.refresh(), this.settings.refresh(), this.runtime.refresh()]);
  }
}
