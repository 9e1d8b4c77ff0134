// Asking before a change that cannot be undone (deleting a diagram, a user or a role, revoking a
// grant): a modal <dialog> rather than window.confirm, so it is styled, says exactly what goes,
// and its buttons are reachable by keyboard (Escape cancels, as the dialog element does).
import { el } from "./dom.js";

/** Resolve to true when the user presses `verb`, false on Cancel or Escape. */
export function confirmDanger(question, verb) {
  return new Promise((resolve) => {
    const dialog = el("dialog", { class: "confirm", role: "alertdialog", "aria-label": verb },
      el("p", {}, question),
      el("div", { class: "confirm-buttons" },
        el("button", { type: "button", "data-answer": "no", onclick: () => dialog.close("no") }, "Cancel"),
        el("button", { type: "button", class: "danger", "data-answer": "yes", onclick: () => dialog.close("yes") }, verb)));
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(dialog.returnValue === "yes");
    });
    document.body.append(dialog);
    dialog.showModal();
    dialog.querySelector('[data-answer="no"]').focus();   // the safe choice has the focus
  });
}
