// Login with role activation. Step one checks the password (opening a session with all of the
// user's roles); step two lets the user keep only some roles active, which opens a session with
// just those (the server has no call to narrow a session, and a user does not know their roles
// before the password is checked). Also logout and "your session ended".
import * as api from "./api.js";
import { el, field, fill, notice } from "./dom.js";

export function loginView(root, onLogin) {
  const user = el("input", { name: "user", autocomplete: "username", required: true });
  const password = el("input", { name: "password", type: "password", autocomplete: "current-password", required: true });
  const message = el("p", { class: "notice", role: "status" });
  const rolesBox = el("div");
  const form = el("form", { class: "card login", "aria-label": "Log in" },
    el("h1", {}, "Log in to Sluice"),
    field("User name", user), field("Password", password),
    el("button", { type: "submit", class: "primary" }, "Log in"), message, rolesBox);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    notice(message, "Checking…");
    try {
      const me = await api.post("/auth/login", { user: user.value, password: password.value });
      message.textContent = "";
      if (me.roles.length <= 1) {
        finish(me);
        return;
      }
      chooseRoles(me);
    } catch (error) {
      notice(message, error.message, "error");
    }
  });

  function chooseRoles(me) {
    const boxes = me.roles.map((role) => el("input", { type: "checkbox", value: role, checked: true, name: "role" }));
    const step = el("fieldset", { class: "roles" },
      el("legend", {}, "Roles to activate"),
      boxes.map((box) => el("label", { class: "check" }, box, " ", box.value)),
      el("button", { type: "button", class: "primary", onclick: activate }, "Continue"));
    fill(rolesBox, step);
    boxes[0].focus();

    async function activate() {
      const chosen = boxes.filter((b) => b.checked).map((b) => b.value);
      if (chosen.length === 0) {
        notice(message, "Choose at least one role to activate.", "error");
        return;
      }
      if (chosen.length === me.roles.length) {
        finish(me);
        return;
      }
      try {
        api.setCsrf(me.csrf_token);
        await api.post("/auth/logout");
        finish(await api.post("/auth/login", { user: user.value, password: password.value, roles: chosen }));
      } catch (error) {
        notice(message, error.message, "error");
      }
    }
  }

  function finish(me) {
    password.value = "";
    fill(rolesBox);
    api.setCsrf(me.csrf_token);
    onLogin(me);
  }

  fill(root, form);
  return { focus: () => user.focus(), say: (text) => notice(message, text, "error") };
}

/** The session the browser already holds (its cookie), or null. */
export async function resume() {
  try {
    const me = await api.get("/auth/whoami");
    api.setCsrf(me.csrf_token);
    return me;
  } catch (error) {
    if (error.status === 401) return null;
    throw error;
  }
}

export async function logout() {
  try {
    await api.post("/auth/logout");
  } catch (error) {
    if (error.status !== 401) throw error;   // already ended: nothing left to end
  }
}
