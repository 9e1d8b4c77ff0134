// Field pickers and completion for a box's expression and field-list fields (a filter's where,
// a map's fields, an aggregate's group_by and aggregates, a join's on): the fields that reach
// the box, as the server computes its upstream boxes' schemas, and the allow-listed functions
// (GET /box-types, from boxes/expressions). "Insert…" puts a name at the cursor (a field list
// gains one more entry); typing offers the names that start with the word being typed. Only a
// help: the server checks whatever is typed.
import { el, fill } from "./dom.js";

const WORD = /[A-Za-z_][A-Za-z0-9_]*$/;
const MOST = 8;   // suggestions shown at once
const KINDS = new Set(["predicate", "named expressions", "named aggregates", "field list"]);

/** Whether a parameter of this kind gets a picker. */
export function completes(kind) {
  return KINDS.has(kind);
}

/**
 * The picker and suggestions for `control` (the input or textarea of a parameter of `kind`,
 * labelled `label`). vocabulary: {fields: a Promise of [{name, type}] (none when unknown),
 * functions, aggregates: [{name, signature}]}.
 */
export function completer(control, kind, label, vocabulary) {
  const list = kind === "field list";
  const picker = el("select", { class: "picker", "aria-label": list ? "Add a field" : "Insert a field or function",
    title: `Insert into ${label}` });
  const suggestions = el("div", { class: "suggestions" });
  let entries = [];

  const show = (fields) => {
    const named = fields.map((f) => ({ insert: f.name, label: `${f.name} (${f.type})`, group: "Fields" }));
    const calls = (items, group) => items.map((f) => ({ insert: `${f.name}(`, label: f.signature, group }));
    entries = list ? named : [...named,
      ...(kind === "named aggregates" ? calls(vocabulary.aggregates, "Aggregates") : []),
      ...calls(vocabulary.functions, "Functions")];
    const groups = [...new Set(entries.map((e) => e.group))];
    fill(picker, el("option", { value: "" }, list ? "Add a field…" : "Insert…"),
      groups.map((g) => el("optgroup", { label: g }, entries.filter((e) => e.group === g)
        .map((e) => el("option", { value: e.insert }, e.label)))));
  };

  /** Put `text` in place of the `typed` characters before the cursor; tell the form. */
  const put = (text, typed = "") => {
    const at = control.selectionEnd ?? control.value.length;
    const before = control.value.slice(0, at - typed.length);
    control.value = `${before}${text}${control.value.slice(at)}`;
    const caret = before.length + text.length;
    control.focus();
    control.setSelectionRange(caret, caret);
    control.dispatchEvent(new Event("input"));
    control.dispatchEvent(new Event("change", { bubbles: true }));
  };

  picker.addEventListener("change", () => {
    const text = picker.value;
    picker.value = "";
    if (!text) return;
    if (!list) put(text);
    else {
      const names = control.value.split(",").map((s) => s.trim()).filter(Boolean);
      if (!names.includes(text)) {
        control.value = [...names, text].join(", ");
        control.dispatchEvent(new Event("input"));
        control.dispatchEvent(new Event("change", { bubbles: true }));
      }
    }
  });

  control.addEventListener("input", () => {
    const typed = WORD.exec(control.value.slice(0, control.selectionEnd ?? control.value.length))?.[0] || "";
    const lower = typed.toLowerCase();
    const found = typed ? entries.filter((e) => e.insert.toLowerCase().startsWith(lower)
      && e.insert !== typed).slice(0, MOST) : [];
    fill(suggestions, found.map((e) => el("button", {
      type: "button", class: "suggestion", title: e.label, onclick: () => {
        fill(suggestions);
        put(e.insert, typed);
      },
    }, e.insert)));
  });

  show([]);
  vocabulary.fields.then(show);
  return el("div", { class: "completion" }, picker, suggestions);
}
