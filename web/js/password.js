// "Change my password": a modal form that proves the current password (POST /auth/password).
// An administrator's reset in the console cannot be used on oneself (the server answers
// OWN_PASSWORD), so that a session left open cannot lock its owner out; this is the way instead.
import * as api from "./api.js";
import { el, field, notice } from "./dom.js";

export function changePassword() {
  const old = el("input", { name: "old-password", type: "password", autocomplete: "current-password", required: true });
  const fresh = el("input", { name: "new-password", type: "password", autocomplete: "new-password", required: true, minlength: 8 });
  const message = el("p", { class: "notice", role: "status" });
  const form = el("form", { method: "dialog" },
    el("h2", {}, "Change my password"),
    field("Current password", old), field("New password", fresh, "At least 8 characters. Your other sessions end."),
    message,
    el("p", { class: "buttons" },
      el("button", { type: "button", onclick: () => dialog.close() }, "Cancel"),
      el("button", { type: "submit", class: "primary" }, "Change")));
  const dialog = el("dialog", { class: "confirm", "aria-label": "Change my password" }, form);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await api.post("/auth/password", { old_password: old.value, new_password: fresh.value });
      old.value = fresh.value = "";
      notice(message, "Password changed; your other sessions have ended.");
      form.querySelector("button.primary").disabled = true;
    } catch (error) {
      notice(message, error.message, "error");
    }
  });
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  old.focus();
}
