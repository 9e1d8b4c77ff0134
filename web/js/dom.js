// Building DOM from data: every string becomes a text node, never markup, so a name such as
// "<img src=x onerror=alert(1)>" shows as those characters and never runs.

/** el("button", {class: "primary", onclick: f}, "Save") -> <button class="primary">Save</button> */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  append(node, children);  // first, so a <select>'s value can pick one of its options
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else if (key in node) node[key] = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  return node;
}

export function append(node, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Replace a node's children. */
export function fill(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

/** A list's rows, redrawn from data so that the row of an item that did not change stays the
 * same node: a redraw (each catalog change causes one) between a click's press and release
 * would otherwise swallow the click. */
export class KeptRows {
  constructor(node, render) {
    this.node = node;
    this.render = render;   // item -> its row element
    this.rows = new Map();  // the item as JSON -> {item, element: its row}
  }

  show(items, empty = null) {
    const rows = new Map(items.map((item) => {
      const key = JSON.stringify(item);
      return [key, this.rows.get(key) || { item, element: this.render(item) }];
    }));
    this.rows = rows;
    const wanted = [...rows.values()].map((row) => row.element);
    const current = [...this.node.children];
    if (wanted.length && wanted.length === current.length && wanted.every((e, i) => e === current[i])) return;
    fill(this.node, wanted.length ? wanted : empty);
  }

  /** The next show() draws the rows of the items that pass `test` afresh. */
  redraw(test) {
    for (const [key, row] of this.rows) if (test(row.item)) this.rows.delete(key);
  }
}

let uid = 0;
/** A fresh id for pairing a <label for> with its control. */
export function freshId(prefix = "f") {
  uid += 1;
  return `${prefix}-${uid}`;
}

/** A labelled control: <div class="field"><label>..</label>control<p class="hint"></p></div>. */
export function field(labelText, control, hint) {
  if (!control.id) control.id = freshId();
  const wrap = el("div", { class: "field" },
    el("label", { for: control.id }, labelText), control);
  if (hint) {
    const hintId = freshId("hint");
    wrap.append(el("p", { class: "hint", id: hintId }, hint));
    control.setAttribute("aria-describedby", hintId);
  }
  return wrap;
}

/** An empty slot for a field's errors (role=alert, so it is announced when it fills). */
export function errorSlot() {
  return el("p", { class: "field-error", id: freshId("err"), role: "alert", hidden: true });
}

/**
 * Show messages in a field's error slot and tie the slot to the control: aria-describedby is
 * what screen readers read with the field (aria-errormessage alone is not yet widely read).
 */
export function showFieldError(slot, control, messages) {
  slot.hidden = false;
  append(slot, messages.map((m) => el("span", {}, m)));
  if (!control) return;
  control.setAttribute("aria-invalid", "true");
  control.setAttribute("aria-errormessage", slot.id);
  const described = (control.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
  if (!described.includes(slot.id)) control.setAttribute("aria-describedby", [slot.id, ...described].join(" "));
}

/** Undo showFieldError. */
export function clearFieldError(slot, control) {
  fill(slot);
  slot.hidden = true;
  control.removeAttribute("aria-invalid");
  control.removeAttribute("aria-errormessage");
  const described = (control.getAttribute("aria-describedby") || "").split(" ").filter((id) => id && id !== slot.id);
  if (described.length) control.setAttribute("aria-describedby", described.join(" "));
  else control.removeAttribute("aria-describedby");
}

/** A table whose cells are text or nodes. */
export function table(headers, rows, caption) {
  return el("table", {},
    caption ? el("caption", {}, caption) : null,
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, rows.map((cells) => el("tr", {}, cells.map((c) => el("td", {}, c))))));
}

/** A message line for the outcome of an action: role=status so screen readers hear it. */
export function notice(node, text, kind = "info") {
  node.className = `notice ${kind}`;
  node.textContent = text;
}

export function select(options, attrs = {}) {
  return el("select", attrs, options.map((o) =>
    typeof o === "string" ? el("option", { value: o }, o) : el("option", { value: o.value }, o.label)));
}

/** Select `value` in a <select> if one of its options has it (a choice kept from before may no
 * longer be offered); whether it did. */
export function pick(node, value) {
  if (typeof value !== "string" || ![...node.options].some((o) => o.value === value)) return false;
  node.value = value;
  return true;
}

/**
 * A console form: a heading, one labelled field per [label, control], Save; on submit the
 * fields' values by name go to `submit` (the page stays).
 */
export function savingForm(title, fields, submit) {
  const form = el("form", { class: "levels-form", "aria-label": title }, el("h3", {}, title),
    fields.map(([label, control]) => field(label, control)),
    el("button", { type: "submit", class: "primary" }, "Save"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit(Object.fromEntries(new FormData(form).entries()));
  });
  return form;
}
