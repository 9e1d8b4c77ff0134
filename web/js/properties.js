// The properties form of the selected box, generated from its type's declaration: a text field
// for a string, a comma-separated list for an array, one "name: expression" line per entry for
// an object, and a group of fields for an object that declares its own parameters (a window).
// Every field carries its document path, so the server's problems land next to their field.
import { completer, completes } from "./completion.js";
import { el, errorSlot, field, fill, select, showFieldError } from "./dom.js";
import { fieldsOf, pathOf, portsOf, sectionOf } from "./document.js";

const CODECS = {
  string: { show: (v) => v ?? "", read: (text) => text.trim() },
  array: {
    show: (v) => (v || []).join(", "),
    read: (text) => text.split(",").map((s) => s.trim()).filter(Boolean),
  },
  // Numbers and flags typed as text: what is not one is sent as typed, for the server to name.
  integer: { show: (v) => v ?? "", read: (text) => wholeOrText(text) },
  boolean: {
    show: (v) => (v === undefined || v === null ? "" : String(v)),
    read: (text) => ({ true: true, false: false })[text.trim().toLowerCase()] ?? (text.trim() || undefined),
  },
  // A slide is a duration ("5s") for a time window and a number of tuples for a count window.
  slide: { show: (v) => v ?? "", read: (text) => wholeOrText(text) },
  // A security policy (an output's ON RESULT): sps as JSON; what does not parse is sent as typed.
  policy: {
    show: (v) => (v && v.length ? JSON.stringify(v) : ""),
    read: (text) => {
      if (!text.trim()) return undefined;
      try { return JSON.parse(text); } catch { return text; }
    },
  },
  object: {
    show: (v) => Object.entries(v || {}).map(([k, x]) => `${k}: ${x}`).join("\n"),
    read: (text) => Object.fromEntries(text.split("\n").map((line) => line.trim()).filter(Boolean)
      .map((line) => {
        const at = line.indexOf(":");
        return at < 0 ? [line, ""] : [line.slice(0, at).trim(), line.slice(at + 1).trim()];
      })),
  },
};

function wholeOrText(text) {
  const trimmed = text.trim();
  return /^\d{1,15}$/.test(trimmed) ? Number(trimmed) : trimmed;
}

/**
 * Render the form for one box into `root`.
 * @param box {type, name, params, refs} (params is changed in place as the user types)
 * @param decl the box type's declaration
 * @param context {streams: names the user may read from, problems: [{path, message}],
 *                 rename(name), vocabulary: what its expression fields complete (completion.js)}
 */
export function renderProperties(root, box, decl, context) {
  const nodePath = pathOf(box);
  const errors = problemsUnder(context.problems, nodePath);
  const form = el("form", { class: "properties", "aria-label": `Properties of ${box.name}` },
    el("h2", {}, `${box.type} box`),
    el("p", { class: "hint" }, decl.description),
    nameField(box, context),
    fieldsOf(decl).map((param) => paramField(box.params, param, "", context.vocabulary)),
    portsSummary(box, decl));
  form.addEventListener("submit", (e) => e.preventDefault());
  fill(root, form);
  showProblems(form, errors);
}

/** Inputs take their name from the streams the user may read; other boxes are named freely. */
function nameField(box, context) {
  let control;
  if (sectionOf(box.type) === "inputs") {
    const names = [...new Set([box.name, ...context.streams])];
    control = select(names, { name: "name", value: box.name });
    control.addEventListener("change", () => context.rename(control.value));
    return withError(field("Stream", control, "an input stream you may read"), "");
  }
  control = el("input", { name: "name", value: box.name, autocomplete: "off", spellcheck: false });
  control.addEventListener("change", () => context.rename(control.value.trim()));
  return withError(field("Name", control), "");
}

function paramField(values, param, prefix, vocabulary) {
  const path = prefix + param.name;
  const label = param.required ? `${param.name} (required)` : param.name;
  if (param.params) {
    values[param.name] = values[param.name] || {};
    return withError(el("fieldset", { class: "group" }, el("legend", {}, label),
      param.params.map((p) => paramField(values[param.name], p, `${path}.`, vocabulary))), path);
  }
  const codec = CODECS[param.kind] || CODECS[param.type] || CODECS.string;
  const control = param.type === "object" || param.kind === "policy"
    ? el("textarea", { rows: 3, spellcheck: false })
    : el("input", { autocomplete: "off", spellcheck: false });
  control.name = path;
  control.value = codec.show(values[param.name]);
  if (param.default !== null && param.default !== undefined) control.placeholder = codec.show(param.default);
  control.addEventListener("input", () => {
    values[param.name] = codec.read(control.value);
  });
  const wrap = field(label, control, param.description);
  if (completes(param.kind)) wrap.append(completer(control, param.kind, label, vocabulary));
  return withError(wrap, path);
}

/** Which boxes feed each port (drawn as arrows; shown here for keyboard and screen readers). */
function portsSummary(box, decl) {
  const ports = portsOf(decl);
  if (!ports.length) return null;
  return el("div", { class: "ports" }, el("h3", {}, "Inputs (arrows)"), ports.map((port, i) => withError(
    el("div", { class: "port" }, el("span", { class: "port-name" }, port.name), " ",
      el("span", {}, box.refs[i]?.length ? box.refs[i].join(", ") : "not connected: draw an arrow into this port")),
    port.name)));
}

function withError(wrap, path) {
  wrap.dataset.path = path;
  wrap.append(errorSlot());
  return wrap;
}

/** Problems whose path is this node's or lies inside it, relative to the node ("window.size"). */
export function problemsUnder(problems, nodePath) {
  return problems
    .filter((p) => p.path === nodePath || p.path.startsWith(`${nodePath}.`))
    .map((p) => ({ ...p, path: p.path.slice(nodePath.length + 1) }));
}

/** Put each problem under the field with the longest path that contains it. */
function showProblems(form, problems) {
  const wraps = [...form.querySelectorAll("[data-path]")];
  for (const problem of problems) {
    const owner = wraps
      .filter((w) => w.dataset.path === "" || problem.path === w.dataset.path
        || problem.path.startsWith(`${w.dataset.path}.`))
      .sort((a, b) => b.dataset.path.length - a.dataset.path.length)[0];
    showFieldError(owner.querySelector(":scope > .field-error"), owner.querySelector("input, select, textarea"),
      [problem.message]);
  }
}
