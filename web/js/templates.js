// Starter diagrams offered beside New. A template names only box types and how they are wired;
// each box's parameters are filled from the declarations the server serves, by their kind
// (a predicate, a field list, a duration...), with the fields of streams the user may read. So
// nothing here copies a box's parameter names or defaults, and a template the server would no
// longer accept fails its test against the server's validation, not silently in a browser.
import { el, fill } from "./dom.js";
import { fieldsOf, portsOf, toDocument } from "./document.js";
import { chartFields } from "./measures.js";

const WINDOW = "window";

// reads: the template's inputs (0, 1) feeding the box's ports in order (all of them into a
// port that takes several); window: the kind of the window's one filled part; extra: optional
// parameters' kinds to fill too. needs: what the input streams must have.
const TEMPLATES = [
  { id: "filter", title: "Filter", about: "Keep a stream's tuples whose number is above a threshold.",
    needs: { streams: 1, number: true }, box: { type: "filter", reads: [0] } },
  { id: "windowed", title: "Windowed aggregate", about: "Count and average per group in 10-second windows of event time.",
    needs: { streams: 1, number: true, key: true, time: true },
    box: { type: "aggregate", reads: [0], window: "duration", extra: ["field list"] } },
  { id: "join", title: "Join", about: "Pair two streams' tuples with equal keys at most 10 seconds apart.",
    needs: { streams: 2, key: true, time: true }, box: { type: "join", reads: [0, 1], extra: ["duration"] } },
  { id: "union", title: "Union", about: "Merge two streams of one schema into one.",
    needs: { streams: 2, same: true }, box: { type: "union", reads: [0, 1] } },
  { id: "counted", title: "Count window", about: "Aggregate the 10 most recent tuples of each group.",
    needs: { streams: 1, number: true, key: true, time: true },
    box: { type: "aggregate", reads: [0], window: "count", extra: ["field list"] } },
];

/** What a stream offers a template: its first measure and key (measures.js), its event time. */
function traits(stream) {
  const time = stream.schema?.event_time || null;
  const { measures, splits } = chartFields(Object.entries(stream.schema?.fields || {}));
  return {
    name: stream.name,
    schema: JSON.stringify(stream.schema || null),
    number: measures[0],
    key: splits[0],
    time,
  };
}

/** The streams a template reads (the first that fit), or null when the user may read none. */
function pick(template, streams) {
  const { needs } = template;
  const fits = streams.map(traits).filter((s) => (!needs.number || s.number)
    && (!needs.key || s.key) && (!needs.time || s.time));
  if (needs.streams === 1) return fits.length ? [fits[0]] : null;
  for (const a of fits) {
    const b = fits.find((s) => s !== a && (needs.same ? s.schema === a.schema : s.key === a.key));
    if (b) return [a, b];
  }
  return null;
}

/** A parameter's starting value for its kind, from the first stream the box reads. */
function valueOf(kind, stream) {
  switch (kind) {
    case "predicate": return `${stream.number} > 0`;
    case "named aggregates": return { n: "count()", [`avg_${stream.number}`]: `avg(${stream.number})` };
    case "field list": return [stream.key];
    case "duration": return "10s";
    case "count": return 10;
    default: return undefined;   // left empty: the server's validation names what is missing
  }
}

/** The box's form values: its required parameters, the extra kinds, and its window's part. */
function paramsOf(decl, spec, stream) {
  const params = {};
  for (const p of fieldsOf(decl)) {
    if (p.kind === WINDOW && p.required) {
      const part = (p.params || []).find((q) => q.kind === spec.window);
      if (part) params[p.name] = { [part.name]: valueOf(part.kind, stream) };
    } else if (p.required || (spec.extra || []).includes(p.kind)) {
      const value = valueOf(p.kind, stream);
      if (value !== undefined) params[p.name] = value;
    }
  }
  return params;
}

/** Wire names into a declaration's ports: in order, or all into a port taking several. */
function refsOf(decl, names) {
  const ports = portsOf(decl);
  if (ports.length === 1 && ports[0].kind === "input refs") return [names];
  return ports.map((_, i) => (names[i] === undefined ? [] : [names[i]]));
}

/** The template's diagram document, named `name`, or null if the user's streams cannot feed it. */
export function build(template, name, declarations, streams) {
  const inputs = pick(template, streams);
  const decl = declarations.get(template.box.type);
  const [input, output] = [declarations.get("input"), declarations.get("output")];
  if (!inputs || !decl || !output || !input) return null;
  const box = `${template.box.type}1`;
  const nodes = [
    ...inputs.map((s) => ({ type: input.type, name: s.name, params: {}, refs: [] })),
    { type: decl.type, name: box, params: paramsOf(decl, template.box, inputs[0]),
      refs: refsOf(decl, template.box.reads.map((i) => inputs[i].name)) },
    { type: output.type, name: `${name}_out`, params: {}, refs: refsOf(output, [box]) },
  ];
  return toDocument(name, nodes, declarations);
}

/** Ask which template to open: resolve to {template, doc}, or null on Cancel or Escape. */
export function chooseTemplate(declarations, streams, freeName) {
  return new Promise((resolve) => {
    let chosen = null;
    const list = el("ul", { class: "template-list" });
    const dialog = el("dialog", { class: "templates", "aria-labelledby": "templates-title" },
      el("h2", { id: "templates-title" }, "New from a template"), list,
      el("div", { class: "confirm-buttons" },
        el("button", { type: "button", onclick: () => dialog.close() }, "Cancel")));
    fill(list, TEMPLATES.map((template) => {
      const name = freeName(template.id);
      const doc = build(template, name, declarations, streams);
      return el("li", {},
        el("button", { type: "button", class: "template", "data-template": template.id, disabled: !doc,
          onclick: () => {
            chosen = { template, doc };
            dialog.close();
          } }, template.title),
        el("p", { class: "hint" }, doc ? template.about : `${template.about} None of your streams fits it.`));
    }));
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(chosen);
    });
    document.body.append(dialog);
    dialog.showModal();
    dialog.querySelector("button:not([disabled])").focus();
  });
}
