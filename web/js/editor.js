// The editor page: palette, canvas and properties, the diagram toolbar (new, save, validate,
// deploy, stop, delete) and the list of the user's diagrams with their live status.
import * as api from "./api.js";
import { Canvas } from "./canvas.js";
import { DiagramList } from "./diagrams.js";
import { depths, fromDocument, pathOf, sectionOf, toDocument } from "./document.js";
import { append, clearFieldError, el, errorSlot, field, fill, notice, showFieldError } from "./dom.js";
import { acceptDrops, renderPalette } from "./palette.js";
import { renderProperties } from "./properties.js";

export class Editor {
  constructor(root) {
    this.root = root;
    this.declarations = new Map();
    this.streams = [];
    this.problems = [];
    this.selected = null;
    this.nameInput = el("input", { name: "diagram", value: "q1", autocomplete: "off", spellcheck: false });
    this.nameError = errorSlot();
    this.message = el("p", { class: "notice", role: "status" });
    this.paletteBox = el("div", { class: "palette-box" });
    this.propertiesBox = el("aside", { class: "properties-box", "aria-label": "Properties" });
    this.problemsBox = el("section", { class: "problems", "aria-label": "Problems" });
    this.canvasBox = el("div", { id: "drawflow", class: "canvas", "aria-label": "Diagram canvas" });
    this.list = new DiagramList((name) => this.load(name));
    const button = (label, action, cls = "") =>
      el("button", { type: "button", class: cls, "data-action": label.toLowerCase(), onclick: () => this.run(action) }, label);
    fill(root,
      el("div", { class: "toolbar" },
        append(field("Diagram name", this.nameInput), [this.nameError]),
        button("New", () => this.reset()),
        button("Validate", () => this.validate()),
        button("Save", () => this.save(), "primary"),
        button("Deploy", () => this.deploy()),
        button("Stop", () => this.stop()),
        button("Delete", () => this.remove(), "danger"),
        this.message),
      el("div", { class: "editor-body" },
        el("div", { class: "sidebar" }, this.paletteBox, this.list.element),
        el("div", { class: "canvas-column" }, this.canvasBox, this.problemsBox),
        this.propertiesBox));
    this.canvas = null;
  }

  /** Load what the page is built from: the box types and the streams this session may see. */
  async open() {
    const [types, streams] = await Promise.all([api.get("/box-types"), api.get("/streams")]);
    this.declarations = new Map(types.box_types.map((d) => [d.type, d]));
    this.streams = streams.streams.map((s) => s.name);
    if (!this.canvas) {
      this.canvas = new Canvas(this.canvasBox, this.declarations, {
        select: (id) => this.select(id),
        change: () => this.refreshProperties(),
      });
      acceptDrops(this.canvasBox, (type, x, y) => this.addBox(type, (name, params) => this.canvas.addAt(type, name, params, x, y)));
    }
    renderPalette(this.paletteBox, this.declarations, (type) =>
      this.addBox(type, (name, params) => this.canvas.addFree(type, name, params)));
    this.showProperties();
    await this.list.refresh();
  }

  /** Something in the catalog changed: streams and diagrams may have appeared or gone. */
  async refresh() {
    const streams = (await api.get("/streams")).streams.map((s) => s.name);
    if (streams.join() !== this.streams.join()) {
      this.streams = streams;
      this.refreshProperties();   // only then: redrawing the form would take the focus away
    }
    await this.list.refresh();
  }

  async run(action) {
    try {
      await action();
    } catch (error) {
      this.showError(error);
    }
  }

  addBox(type, place) {
    const name = this.freshName(type);
    if (name === null) {
      notice(this.message, "You may read no input stream that is not already on the canvas.", "error");
      return;
    }
    const id = place(name, {});
    this.select(id);
  }

  /** Inputs are named after a readable stream; other boxes get the first free "<type><n>". */
  freshName(type) {
    const used = new Set(this.canvas.nodes().map((n) => n.name));
    if (sectionOf(type) === "inputs") return this.streams.find((s) => !used.has(s)) ?? null;
    for (let n = 1; ; n += 1) if (!used.has(`${type}${n}`)) return `${type}${n}`;
  }

  select(id) {
    this.selected = id;
    this.showProperties();
  }

  refreshProperties() {
    if (this.selected && !this.canvas.get(this.selected)) this.selected = null;
    this.showProperties();
  }

  showProperties() {
    if (!this.selected) {
      fill(this.propertiesBox, el("p", { class: "hint" },
        "Drag a box from the palette onto the canvas (or press it), draw arrows from a box's right-hand port to another box's left-hand port, then select a box to edit it."));
      return;
    }
    const node = this.canvas.nodes().find((n) => n.id === this.selected);
    renderProperties(this.propertiesBox, node, this.declarations.get(node.type), {
      streams: this.streams,
      problems: this.problems,
      rename: (name) => {
        this.canvas.rename(this.selected, name);
        this.showProperties();
      },
    });
  }

  document() {
    return toDocument(this.nameInput.value.trim(), this.canvas.nodes(), this.declarations);
  }

  async validate() {
    const answer = await api.post("/diagrams/validate", { document: this.document() });
    this.setProblems(answer.valid ? [] : answer.problems);
    if (answer.valid) notice(this.message, "The diagram is valid.", "ok");
    else notice(this.message, countProblems(answer.problems), "error");
  }

  async save() {
    const saved = await api.post("/diagrams", { document: this.document() });
    this.setProblems([]);
    notice(this.message, `Saved ${saved.name}.`, "ok");
    await this.list.refresh();
  }

  /** Deploy the diagram on the canvas, saving it first if the server does not have it yet. */
  async deploy() {
    const name = this.nameInput.value.trim();
    if (!this.list.has(name)) await this.save();
    const answer = await api.post(`/diagrams/${api.seg(name)}/deploy`);
    notice(this.message, `${name} is ${answer.status}.`, "ok");
    await this.list.refresh();
  }

  async stop() {
    const name = this.nameInput.value.trim();
    const answer = await api.post(`/diagrams/${api.seg(name)}/stop`);
    notice(this.message, `${name} is ${answer.status}.`, "ok");
    await this.list.refresh();
  }

  async remove() {
    const name = this.nameInput.value.trim();
    await api.del(`/diagrams/${api.seg(name)}`);
    notice(this.message, `Deleted ${name}.`, "ok");
    await this.list.refresh();
  }

  reset() {
    this.canvas.clear();
    this.nameInput.value = "";
    this.setProblems([]);
    this.select(null);
    notice(this.message, "");
    this.nameInput.focus();
  }

  async load(name) {
    const diagram = await api.get(`/diagrams/${api.seg(name)}`);
    this.canvas.clear();
    this.select(null);
    this.setProblems([]);
    this.nameInput.value = diagram.name;
    const nodes = fromDocument(diagram.document || {}, this.declarations);
    const columns = depths(nodes);
    const rows = new Map();
    const ids = nodes.map((node, i) => {
      const row = rows.get(columns[i]) || 0;
      rows.set(columns[i], row + 1);
      return this.canvas.add(node.type, node.name, node.params, 40 + columns[i] * 210, 30 + row * 110);
    });
    nodes.forEach((node, i) => node.refs.forEach((names, port) => names.forEach((ref) => {
      const from = this.canvas.idOfName(ref);
      if (from) this.canvas.connect(from, ids[i], port);
    })));
    notice(this.message, `Loaded ${diagram.name} (${diagram.status}).`, "ok");
  }

  setProblems(problems) {
    this.problems = problems;
    clearFieldError(this.nameError, this.nameInput);
    const named = problems.filter((p) => p.path === "name").map((p) => p.message);
    if (named.length) showFieldError(this.nameError, this.nameInput, named);
    const paths = new Map(this.canvas.nodes().map((n) => [pathOf(n), n.id]));
    const owner = (p) => [...paths.keys()].find((k) => p.path === k || p.path.startsWith(`${k}.`));
    this.canvas.mark(new Set(problems.map(owner).filter(Boolean).map((k) => paths.get(k))));
    fill(this.problemsBox, problems.length ? el("ul", {}, problems.map((p) => {
      const where = owner(p);
      return el("li", {},
        where ? el("button", { type: "button", class: "link", onclick: () => this.select(paths.get(where)) }, p.path)
          : el("code", {}, p.path || "document"),
        ": ", p.message);
    })) : null);
    this.showProperties();
  }

  showError(error) {
    if (error.problems && error.problems.length) {
      this.setProblems(error.problems);
      notice(this.message, countProblems(error.problems), "error");
    } else {
      notice(this.message, error.message, "error");
    }
  }
}

function countProblems(problems) {
  return problems.length === 1 ? "The diagram has 1 problem; see the marked box."
    : `The diagram has ${problems.length} problems; see the marked boxes.`;
}
