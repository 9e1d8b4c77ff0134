// The palette: one entry per box type the server declares, in the server's order. Drag an
// entry onto the canvas, or press it (mouse or keyboard) to add the box in a free spot.
import { el, fill } from "./dom.js";

export const DRAG_TYPE = "application/x-sluice-box";

export function renderPalette(root, declarations, onAdd) {
  fill(root, el("h2", { id: "palette-title" }, "Boxes"),
    el("ul", { class: "palette", "aria-labelledby": "palette-title" }, [...declarations.values()].map((decl) => {
      const item = el("button", {
        type: "button", class: "palette-item", draggable: true, title: decl.description,
        "data-type": decl.type, onclick: () => onAdd(decl.type),
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
