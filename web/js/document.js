// Between the canvas's boxes and the diagram document the server validates, deploys and stores.
// Everything here follows the box-type declarations from the server: which parameters are ports
// (references to other boxes) and which are form fields. The document itself has three sections
// of named nodes: a type named "input" lives under "inputs", "output" under "outputs", and every
// other type under "boxes" with its "type" key (the document format, not a list of box types).

export const VERSION = 1;
const REF_KINDS = new Set(["input ref", "input refs"]);
const NODE_SECTIONS = ["inputs", "outputs"];
const DRAWN = new Set(["version", "name", "inputs", "boxes", "outputs"]);

export function sectionOf(type) {
  return NODE_SECTIONS.includes(`${type}s`) ? `${type}s` : "boxes";
}

/** The parameters drawn as input ports, in declaration order. */
export function portsOf(decl) {
  return decl.params.filter((p) => REF_KINDS.has(p.kind));
}

/** The parameters shown in the properties form. */
export function fieldsOf(decl) {
  return decl.params.filter((p) => !REF_KINDS.has(p.kind));
}

/** Outputs are read by subscribers, never by another box, so they have no output port. */
export function hasOutputPort(decl) {
  return sectionOf(decl.type) !== "outputs";
}

/** A node's document path, as the server's problems name it: "boxes.avg". */
export function pathOf(node) {
  return `${sectionOf(node.type)}.${node.name}`;
}

/**
 * A document's sections the canvas does not draw (its description, level, real-time mode,
 * schemas): the editor keeps them as they came, so that saving what it drew never drops them.
 */
export function settingsOf(doc) {
  return Object.fromEntries(Object.entries(doc || {}).filter(([key]) => !DRAWN.has(key)));
}

/**
 * The document for the canvas's nodes and the document's other sections (`settings`). Each
 * node is {type, name, params, refs}, where refs[i] lists the names feeding its i-th port.
 */
export function toDocument(name, nodes, declarations, settings = {}) {
  const doc = { version: VERSION, name, ...settingsOf(settings), inputs: {}, boxes: {}, outputs: {} };
  for (const node of nodes) {
    const decl = declarations.get(node.type);
    const spec = sectionOf(node.type) === "boxes" ? { type: node.type } : {};
    Object.assign(spec, prune(node.params));
    portsOf(decl).forEach((port, i) => {
      const sources = node.refs[i] || [];
      if (port.kind === "input refs") spec[port.name] = sources;
      else if (sources.length) spec[port.name] = sources[0];
    });
    doc[sectionOf(node.type)][node.name] = spec;
  }
  return doc;
}

/** Leave out parameters the user left empty, so the server's defaults apply. */
function prune(params) {
  const out = {};
  for (const [key, value] of Object.entries(params)) {
    if (value === "" || value === null || value === undefined) continue;
    if (Array.isArray(value) && value.length === 0) continue;
    if (typeof value === "object" && !Array.isArray(value)) {
      const inner = prune(value);
      if (Object.keys(inner).length) out[key] = inner;
      continue;
    }
    out[key] = value;
  }
  return out;
}

/** The nodes of a stored document (the inverse of toDocument); unknown types are skipped. */
export function fromDocument(doc, declarations) {
  const nodes = [];
  for (const section of ["inputs", "boxes", "outputs"]) {
    for (const [name, raw] of Object.entries(doc[section] || {})) {
      const spec = raw || {};
      const type = section === "boxes" ? spec.type : section.slice(0, -1);
      const decl = declarations.get(type);
      if (!decl) continue;
      const params = {};
      for (const p of fieldsOf(decl)) if (spec[p.name] !== undefined) params[p.name] = spec[p.name];
      const refs = portsOf(decl).map((p) => [].concat(spec[p.name] ?? []));
      nodes.push({ type, name, params, refs });
    }
  }
  return nodes;
}

/** Column (distance from the inputs) of each node, for laying out a loaded document. */
export function depths(nodes) {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const memo = new Map();
  const depth = (node, seen) => {
    if (memo.has(node.name)) return memo.get(node.name);
    if (seen.has(node.name)) return 0;   // a cycle: the server will report it
    seen.add(node.name);
    const ups = node.refs.flat().map((r) => byName.get(r)).filter(Boolean);
    const d = ups.length ? 1 + Math.max(...ups.map((u) => depth(u, seen))) : 0;
    memo.set(node.name, d);
    return d;
  };
  return nodes.map((n) => depth(n, new Set()));
}
