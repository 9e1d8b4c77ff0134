// Admin console, access policies (ASSIST, docs/rewrite.md): the policies that rewrite a diagram
// reading a protected stream at deploy, added from YAML or the paper's XML, dropped one by one,
// and each user's attributes (the `self` of their predicates). The forms are built once, so a
// catalog change (which refreshes the table and the user list) never undoes what is typed.
// Every change answers the diagrams it stopped as stale; the panel says which.
import * as api from "./api.js";
import { confirmDanger } from "./confirm.js";
import { el, fill, notice, savingForm, select, table } from "./dom.js";

const EXAMPLE = `policies:
  - name: own-ships
    role: SHIPCO
    streams: {ais: "*"}
    where: "mmsi IN (self.ships)"
    privilege: read`;

/** "Done." plus the diagrams a change stopped, if any. */
function outcome(done, answer) {
  const stopped = (answer && answer.stopped) || [];
  return stopped.length ? `${done} Stopped as stale: ${stopped.join(", ")}.` : done;
}

function parsed(text, what) {
  if (!text.trim()) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${what} must be JSON, such as {"ships": [1, 2]}`);
  }
}

export class PoliciesPanel {
  constructor(root) {
    this.root = root;
    this.message = el("p", { class: "notice", role: "status" });
    this.list = el("div");
    this.user = select([], { name: "user" });
    this.attributes = el("textarea", { name: "attributes", rows: 4 });
    this.user.addEventListener("change", () => this.loadAttributes());
    fill(root, el("h2", {}, "Access policies"), this.list,
      this.form("Add policies", [["YAML", el("textarea", { name: "yaml", rows: 8, required: true, placeholder: EXAMPLE })]],
        ({ yaml }) => api.post("/policies", { yaml }), "Policies added."),
      this.form("Import the paper's XML", [
        ["XML", el("textarea", { name: "xml", rows: 8, required: true })],
        ["Method templates (JSON)", el("textarea", { name: "methods", rows: 3 })],
        ["Role names (JSON)", el("textarea", { name: "roles", rows: 2 })]],
      ({ xml, methods, roles }) => api.post("/policies",
        { xml, methods: parsed(methods, "Method templates"), roles: parsed(roles, "Role names") }),
      "Policies imported."),
      this.form("Attributes of a user", [["User", this.user], ["Attributes (JSON)", this.attributes]],
        ({ user, attributes }) => api.put(`/policies/users/${api.seg(user)}`,
          { attributes: parsed(attributes, "Attributes") }), "Attributes set."),
      this.message);
  }

  async refresh() {
    const [{ policies }, { users }] = await Promise.all([api.get("/policies"), api.get("/users")]);
    fill(this.list, table(["Policy", "Role", "Streams", "Privilege", "Where", ""], policies.map((p) => [
      p.name, p.role,
      Object.entries(p.streams).map(([s, a]) => `${s}: ${a === "*" ? "*" : a.join(", ")}`).join("; "),
      Array.isArray(p.privilege) ? p.privilege.join(", ") : p.privilege,
      p.where || "",
      el("button", { type: "button", class: "danger", "aria-label": `Drop policy ${p.name}`,
        onclick: () => this.drop(p.name) }, "Drop")]), "Policies"));
    const chosen = this.user.value;
    fill(this.user, users.map((u) => el("option", { value: u.name }, u.name)));
    if (users.some((u) => u.name === chosen)) this.user.value = chosen;
    else await this.loadAttributes();
  }

  /** Show the chosen user's attributes, unless the administrator typed meanwhile. */
  async loadAttributes() {
    if (!this.user.value) return;
    const before = this.attributes.value;
    const { attributes } = await api.get(`/policies/users/${api.seg(this.user.value)}`);
    if (this.attributes.value === before) this.attributes.value = JSON.stringify(attributes);
  }

  async act(request, done) {
    try {
      const answer = await request();
      await this.refresh();
      notice(this.message, outcome(done, answer), "ok");
    } catch (error) {
      notice(this.message, error.message, "error");
    }
  }

  form(title, fields, send, done) {
    return savingForm(title, fields, (values) => {
      this.act(() => send(values), done);
    });
  }

  async drop(name) {
    if (!(await confirmDanger(`Drop policy ${name}? What it granted is denied from now on.`, "Drop"))) return;
    await this.act(() => api.del(`/policies/${api.seg(name)}`), `Dropped policy ${name}.`);
  }
}
