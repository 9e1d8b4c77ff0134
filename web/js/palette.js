// The palette: one entry per box type the server declares, in the server's order. Drag an
// entry onto the canvas, or press it (mouse or keyboard) to add the box in a free spot. A
// session that may not save a diagram gets the entries disabled, with the reason.
import { el, fill } from "./dom.js";

export const DRAG_TYPE = "application/x-sluice-box";

/** `refusal`: why the session may not use the palette (null when it may). */
export function renderPalette(root, declarations, onAdd, refusal = null) {
  fill(root, el("h2", { id: "palette-title" }, "Boxes"),
    refusal ? el("p", { class: "palette-note hint" }, refusal) : null,
    el("ul", { class: "palette", "aria-labelledby": "palette-title" }, [...declarations.values()].map((decl) => {
      const item = el("button", {
        type: "button", class: "palette-item", draggable: !refusal, title: refusal ?? decl.description,
        disabled: Boolean(refusal), "data-type": decl.type, onclick: () => onAdd(decl.type),
      }, el("span", { class: "box-type" }, decl.type));
      item.addEventListener("dragstart", (event) => {
        event.dataTransfer.setData(DRAG_TYPE, decl.type);
        event.dataTransfer.effectAllowed = "copy";
      });
      return el("li", {}, item);
    })));
}

/** Let `target` accept palette entries; `onDrop(type, clientX, clientY)`. */
export function acceptDrops(target, onDrop) {
  target.addEventListener("dragover", (event) => {
    if (event.dataTransfer.types.includes(DRAG_TYPE)) event.preventDefault();
  });
  target.addEventListener("drop", (event) => {
    const type = event.dataTransfer.getData(DRAG_TYPE);
    if (!type) return;
    event.preventDefault();
    onDrop(type, event.clientX, event.clientY);
  });
}
