// The editor page: palette, canvas and properties, the diagram toolbar (new, save, validate,
// deploy, stop, delete), the canvas toolbar (undo, redo, copy, paste, fit, export, import) with
// their keyboard shortcuts, the query tab (the diagram as CQL, and CQL drawn as a diagram), and
// the list of the user's diagrams with their live status.
import * as api from "./api.js";
import { Canvas } from "./canvas.js";
import { capabilities } from "./capabilities.js";
import { swapSummary } from "./compare.js";
import { confirmDanger } from "./confirm.js";
import { DiagramList } from "./diagrams.js";
import { depths, fromDocument, pathOf, sectionOf, settingsOf, toDocument } from "./document.js";
import { append, clearFieldError, el, errorSlot, field, fill, notice, showFieldError } from "./dom.js";
import { History } from "./history.js";
import { acceptDrops, renderPalette } from "./palette.js";
import { previewPanel } from "./preview.js";
import { renderProperties } from "./properties.js";
import { QueryTab } from "./query.js";
import { RewriteNote } from "./rewrite.js";
import { chooseTemplate } from "./templates.js";
import { VersionList } from "./versions.js";

const PASTE_OFFSET = 40;

export class Editor {
  constructor(root) {
    this.root = root;
    this.declarations = new Map();
    this.functions = { functions: [], aggregates: [] };   // the allow-listed ones (GET /box-types)
    this.fieldsOf = new Map();   // a box's upstream boxes as a document (JSON) -> their fields
    // settled once open() has the box types and streams: the toolbar shows before that
    this.ready = new Promise((resolve) => { this.markReady = resolve; });
    this.streams = [];
    this.problems = [];
    this.selected = null;
    this.loaded = null;     // the name of the stored diagram the canvas holds, if it holds one
    this.savedDoc = null;   // that diagram's document as last loaded or saved (JSON)
    this.baseline = null;   // the document as last drawn, loaded or saved (JSON): what edits change
    this.clipboard = [];
    this.history = new History();
    this.nameInput = el("input", { name: "diagram", value: "", autocomplete: "off", spellcheck: false });
    this.settings = {};     // the document's sections the canvas does not draw (settingsOf)
    this.realtimeInput = el("input", { type: "checkbox", name: "realtime", onchange: () => this.setRealtime() });
    this.nameError = errorSlot();
    this.message = el("p", { class: "notice", role: "status" });
    this.paletteBox = el("div", { class: "palette-box" });
    this.propertiesBox = el("aside", { class: "properties-box", "aria-label": "Properties" });
    this.propertiesBox.addEventListener("change", () => this.record());
    this.problemsBox = el("section", { class: "problems", "aria-label": "Problems" });
    this.canvasBox = el("div", { id: "drawflow", class: "canvas", "aria-label": "Diagram canvas" });
    this.importInput = el("input", { type: "file", accept: ".json,application/json", hidden: true,
      "aria-label": "Diagram document to import", onchange: () => this.run(() => this.importFile()) });
    this.list = new DiagramList((name) => this.run(async () => { if (await this.mayDiscard()) await this.load(name); }),
      (name, progress) => this.showRun(name, progress));
    this.runFault = null;   // {box, message}: the box whose query failed in the loaded diagram
    this.rewrite = new RewriteNote();
    this.versions = new VersionList(async (name, version, doc) => {
      if (await this.mayDiscard()) this.openVersion(name, version, doc);
    }, (name, text) => this.run(async () => { if (await this.mayDiscard()) await this.load(name); notice(this.message, text, "ok"); }));
    this.query = new QueryTab({
      document: () => (this.canvas?.nodes().length ? this.document() : null),
      name: () => this.nameInput.value.trim(),
      draw: (doc) => this.drawQuery(doc),
      run: (action) => this.run(action),
    });
    this.buttons = [];
    this.refusals = new Map();   // button -> why the session may not use it: it stays disabled
    const button = (label, action, attrs = {}) => {
      const b = el("button", { type: "button", "data-action": label.toLowerCase(), ...attrs, onclick: () => this.run(action) }, label);
      this.buttons.push(b);
      return b;
    };
    const key = (label, keys, action) => button(label, action, { "aria-keyshortcuts": keys, title: `${label} (${keys})` });
    fill(root,
      el("div", { class: "toolbar" },
        append(field("Diagram name", this.nameInput), [this.nameError]),
        field("Real-time", this.realtimeInput, "results in milliseconds where the server has a slot"),
        button("New", async () => { if (await this.mayDiscard()) this.reset(); }),
        button("From template", () => this.fromTemplate(), { title: "A new diagram from a starter: filter, aggregate, join, union, count window" }),
        button("Validate", () => this.validate()),
        key("Save", "Control+S", () => this.save()),
        button("Deploy", () => this.deploy()),
        button("Stop", () => this.stop()),
        button("Delete", () => this.remove(), { class: "danger" }),
        this.message),
      el("div", { class: "editor-body" },
        el("div", { class: "sidebar" }, this.paletteBox, this.list.element, this.rewrite.element,
          this.versions.element),
        el("div", { class: "canvas-column" },
          el("div", { class: "tabs", role: "tablist", "aria-label": "Editor view" }, this.viewTabs()),
          this.query.element,
          el("div", { class: "canvas-tools", role: "toolbar", "aria-label": "Canvas" },
            key("Undo", "Control+Z", () => this.undo()),
            key("Redo", "Control+Shift+Z", () => this.redo()),
            key("Copy", "Control+C", () => this.copy()),
            key("Paste", "Control+V", () => this.paste()),
            key("Select all", "Control+A", () => this.canvas.pick([...this.canvas.boxes.keys()])),
            button("Fit", () => this.canvas.fit(), { title: "Zoom to show every box" }),
            button("Export", () => this.exportFile(), { title: "Download the diagram document as JSON" }),
            button("Import", async () => { if (await this.mayDiscard()) this.importInput.click(); }, { title: "Open a diagram document from a file" }),
            this.importInput),
          this.canvasBox, this.problemsBox),
        this.propertiesBox));
    root.querySelector('[data-action="save"]').classList.add("primary");
    this.diagramView = [root.querySelector('.canvas-tools[role="toolbar"]'), this.canvasBox, this.problemsBox];
    this.view("Diagram");
    // capturing on window: before Drawflow's own Delete key, which would remove one box alone
    this.onKey = (event) => this.shortcut(event);
    // closing the tab or reloading: the browser asks (in its own words) when work would be lost
    this.onUnload = (event) => {
      if (this.dirty()) event.preventDefault();
    };
    window.addEventListener("keydown", this.onKey, true);
    window.addEventListener("beforeunload", this.onUnload);
    this.canvas = null;
  }

  /** The tabs between the diagram (canvas) and its query (CQL). */
  viewTabs() {
    this.tabs = ["Diagram", "Query"].map((t) => el("button", {
      type: "button", role: "tab", "data-tab": t, onclick: () => this.run(() => this.view(t)),
    }, t));
    return this.tabs;
  }

  /** Show the canvas, or the query tab with the CQL of what the canvas holds. */
  async view(tab) {
    for (const b of this.tabs) b.setAttribute("aria-selected", String(b.dataset.tab === tab));
    for (const node of this.diagramView) node.hidden = tab !== "Diagram";
    this.query.element.hidden = tab !== "Query";
    if (tab === "Query") await this.query.show();
  }

  /** A document compiled from the query tab's CQL, drawn on the canvas: a new diagram until
   * Save, unless it keeps the name of the stored diagram the canvas was loaded from. */
  drawQuery(doc) {
    this.show(doc.name, doc, { ...this.settings, ...settingsOf(doc) });   // CQL says none of them
    if (this.loaded !== doc.name) {
      this.loaded = null;
      this.versions.show(null);
      this.rewrite.show(null);
      this.savedDoc = null;
    }
    const n = this.canvas.nodes().length;
    notice(this.message, `Drew ${doc.name} from its query (${n} boxes); Save or Deploy stores it.`, "ok");
  }

  /** Load what the page is built from: the box types and the streams this session may see. */
  async open() {
    const [types, streams, may] = await Promise.all([api.get("/box-types"), api.get("/streams"), capabilities()]);
    // Save, and Deploy (which saves the canvas first), create or update a diagram: both need
    // what the policy table's diagrams.create needs, ADD on the system
    const refusal = may("diagrams.create") ? null : "Saving a diagram needs ADD on the system";
    for (const action of ["save", "deploy"]) this.refuse(action, refusal);
    this.declarations = new Map(types.box_types.map((d) => [d.type, d]));
    this.functions = { functions: types.functions, aggregates: types.aggregates };
    this.streams = streams.streams.map((s) => s.name);
    if (!this.canvas) {
      this.canvas = new Canvas(this.canvasBox, this.declarations, {
        select: (id) => this.select(id),
        change: () => this.refreshProperties(),
        edited: () => this.record(),
        refused: (text) => notice(this.message, text, "error"),
      });
      acceptDrops(this.canvasBox, (type, x, y) => this.addBox(type, (name, params) => this.canvas.addAt(type, name, params, x, y)));
      this.history.reset(this.canvas.snapshot());
      this.settle();
    }
    renderPalette(this.paletteBox, this.declarations, (type) =>
      this.addBox(type, (name, params) => this.canvas.addFree(type, name, params)), refusal);
    this.showProperties();
    this.markReady();
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

  /** Disable a toolbar action the session may not perform, its title saying why (null: allow). */
  refuse(action, reason) {
    const b = this.root.querySelector(`.toolbar [data-action="${action}"]`);
    if (reason) this.refusals.set(b, reason);
    else this.refusals.delete(b);
    b.dataset.title ??= b.title;
    b.disabled = Boolean(reason);
    b.title = reason ?? b.dataset.title;
  }

  /** Run a toolbar action; its buttons wait (disabled, aria-busy) until it ends, errors show. */
  async run(action) {
    this.root.setAttribute("aria-busy", "true");
    for (const b of this.buttons) b.disabled = true;
    try {
      await action();
    } catch (error) {
      this.showError(error);
    } finally {
      for (const b of this.buttons) b.disabled = this.refusals.has(b);
      this.root.removeAttribute("aria-busy");
    }
  }

  /** The session ended (logged out): stop polling and listening; the page is rebuilt at login. */
  close() {
    this.list.stop();
    window.removeEventListener("keydown", this.onKey, true);
    window.removeEventListener("beforeunload", this.onUnload);
  }

  /**
   * Keyboard shortcuts on the editor page. Save works everywhere on it, fields and the query
   * tab included (a field's typing is committed first); in a field, the other shortcuts keep
   * their meaning for its text (undo typing, copy text, ...).
   */
  shortcut(event) {
    if (this.root.hidden || !this.canvas || !this.root.contains(this.canvasBox)) return;   // another page, or a stale editor
    if (document.querySelector("dialog[open]")) return;
    const mod = event.ctrlKey || event.metaKey;
    const k = event.key.toLowerCase();
    const inField = event.target.closest?.("input, textarea, select, [contenteditable]");
    if (mod && k === "s" && !event.shiftKey && !event.altKey) {
      event.preventDefault();
      if (inField && this.propertiesBox.contains(inField)) inField.dispatchEvent(new Event("change", { bubbles: true }));
      const refused = this.refusals.get(this.root.querySelector('.toolbar [data-action="save"]'));
      if (refused) notice(this.message, `${refused}.`, "error");
      else this.run(() => this.saveShown());
      return;
    }
    if (this.canvasBox.hidden || inField) return;   // the query tab, or typing in a field
    const actions = {
      z: () => (event.shiftKey ? this.redo() : this.undo()),
      y: () => this.redo(),
      c: () => this.copy(),
      v: () => this.paste(),
      a: () => this.canvas.pick([...this.canvas.boxes.keys()]),
    };
    if (mod && actions[k]) {
      event.preventDefault();
      actions[k]();
    } else if (!mod && (event.key === "Delete" || event.key === "Backspace") && this.canvas.picked.size) {
      event.preventDefault();
      this.canvas.removeMany([...this.canvas.picked]);
      this.record();
    }
  }

  /** One undoable step: the canvas as it is now. */
  record() {
    if (this.canvas) this.history.record(this.canvas.snapshot());
  }

  undo() {
    const state = this.history.undo();
    if (state) this.restore(state);
  }

  redo() {
    const state = this.history.redo();
    if (state) this.restore(state);
  }

  restore(state) {
    this.selected = null;
    this.canvas.restore(state);
    this.setProblems([]);
  }

  copy() {
    const ids = this.canvas.picked.size ? [...this.canvas.picked] : this.selected ? [this.selected] : [];
    this.clipboard = this.canvas.snapshot(ids);
    notice(this.message, this.clipboard.length === 1 ? "Copied 1 box." : `Copied ${this.clipboard.length} boxes.`, "ok");
  }

  /** Paste the copied boxes, renamed to free names, with the arrows between them, a little apart. */
  paste() {
    if (!this.clipboard.length) return;
    const renamed = new Map();
    const items = [];
    for (const item of this.clipboard) {
      const name = this.freshName(item.type, [...renamed.values()]);
      if (name === null) continue;   // an input needs a readable stream not yet on the canvas
      renamed.set(item.name, name);
      items.push({ ...item, name });
    }
    for (const item of items) item.refs = item.refs.map((names) => names.filter((n) => renamed.has(n)).map((n) => renamed.get(n)));
    const ids = this.canvas.place(items, PASTE_OFFSET, PASTE_OFFSET);
    this.canvas.pick(ids);
    this.record();
    const skipped = this.clipboard.length - items.length;
    notice(this.message, `Pasted ${items.length} of ${this.clipboard.length} boxes${skipped ? " (no free stream for the other inputs)" : ""}.`, skipped ? "error" : "ok");
  }

  addBox(type, place) {
    const name = this.freshName(type);
    if (name === null) {
      notice(this.message, "You may read no input stream that is not already on the canvas.", "error");
      return;
    }
    const id = place(name, {});
    this.record();
    this.select(id);
  }

  /** Inputs are named after a readable stream; other boxes get the first free "<type><n>". */
  freshName(type, taken = []) {
    const used = new Set([...this.canvas.nodes().map((n) => n.name), ...taken]);
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
    const node = this.selected && this.canvas?.nodes().find((n) => n.id === this.selected);
    if (!node) {
      this.selected = null;
      fill(this.propertiesBox, el("p", { class: "hint" },
        "Drag a box from the palette onto the canvas (or press it), draw arrows from a box's right-hand port to another box's left-hand port, then select a box to edit it. Shift+click selects several boxes."));
      return;
    }
    renderProperties(this.propertiesBox, node, this.declarations.get(node.type), {
      streams: this.streams,
      problems: this.problems,
      rename: (name) => {
        this.canvas.rename(this.selected, name);
        this.showProperties();
      },
      vocabulary: { ...this.functions, fields: this.fieldsInto(node) },
    });
    if (this.loaded !== null) this.propertiesBox.append(previewPanel(this.loaded, node.name, () => this.edited()));
  }

  /**
   * The fields that reach a box: the schemas the server gives the boxes feeding it, from a
   * check of the part of the canvas upstream of it (each feeding box ends in a probe output).
   * None while that part does not build. Asked once per distinct upstream part.
   */
  fieldsInto(node) {
    const nodes = this.canvas.nodes();
    const byName = new Map(nodes.map((n) => [n.name, n]));
    const feeding = node.refs.flat().filter((name) => byName.has(name));
    const upstream = new Set();
    for (const todo = [...feeding]; todo.length;) {
      const name = todo.pop();
      if (upstream.has(name) || !byName.has(name)) continue;
      upstream.add(name);
      todo.push(...byName.get(name).refs.flat());
    }
    if (!feeding.length) return Promise.resolve([]);
    const probes = feeding.map((name, i) => ({ type: "output", name: `fields_probe_${i}`, params: {}, refs: [[name]] }));
    const doc = toDocument("fields_probe", [...nodes.filter((n) => upstream.has(n.name)), ...probes], this.declarations);
    const key = JSON.stringify(doc);
    if (!this.fieldsOf.has(key)) {
      this.fieldsOf.set(key, api.post("/diagrams/validate", { document: doc }).then((answer) => {
        if (!answer.valid) return [];
        const schemas = answer.plan.boxes.filter((b) => feeding.includes(b.name)).map((b) => b.schema.fields);
        const fields = new Map(schemas.flatMap((f) => Object.entries(f)));
        return [...fields].map(([name, type]) => ({ name, type }));
      }, () => []));
    }
    return this.fieldsOf.get(key);
  }

  document() {
    return toDocument(this.nameInput.value.trim(), this.canvas.nodes(), this.declarations, this.settings);
  }

  /** The diagram asks for Spark's real-time mode, or not (docs/architecture.md, "Real-time
   * mode"): its outputs that can run so do, where the server has slots; status says which. */
  setRealtime() {
    const rest = { ...this.settings };
    delete rest.realtime;
    this.settings = this.realtimeInput.checked ? { ...rest, realtime: true } : rest;
  }

  keepSettings(settings) {
    this.settings = settings;
    this.realtimeInput.checked = settings.realtime === true;
  }

  /** The diagram name typed or loaded; without one, say so and return null. */
  named(action) {
    const name = this.nameInput.value.trim();
    if (!name) {
      notice(this.message, `Type a diagram's name, or open one from Your diagrams, to ${action} it.`, "error");
      this.nameInput.focus();
      return null;
    }
    return name;
  }

  /** Whether the canvas (or the query typed in its tab) holds work that New, opening another
   * diagram, logging out or closing the tab would discard. */
  dirty() {
    if (!this.canvas) return false;
    return this.query.edited || JSON.stringify(this.document()) !== this.baseline;
  }

  /** True when nothing would be lost, or the user agrees to discard the edits. */
  async mayDiscard() {
    if (!this.dirty()) return true;
    const name = this.nameInput.value.trim();
    return confirmDanger(`${name ? `Diagram ${name} has` : "The canvas has"} unsaved changes. Discard them?`, "Discard");
  }

  /** What the canvas holds now is what edits are measured from. */
  settle() {
    this.baseline = JSON.stringify(this.document());
  }

  /** Whether the canvas differs from the stored diagram it was loaded from. */
  edited() {
    return this.loaded !== null && JSON.stringify(this.document()) !== this.savedDoc;
  }

  async validate() {
    const answer = await api.post("/diagrams/validate", { document: this.document() });
    this.setProblems(answer.valid ? [] : answer.problems);
    if (answer.valid) notice(this.message, "The diagram is valid.", "ok");
    else notice(this.message, countProblems(answer.problems), "error");
  }

  /** Save what the user sees: in the Query tab, CQL typed since it was drawn is drawn first
   * (and nothing is saved while it has problems, which the tab lists). */
  async saveShown() {
    if (!this.query.element.hidden && this.query.edited) {
      await this.query.draw();
      if (this.query.edited) return;
    }
    await this.save();
  }

  /** Update the stored diagram the canvas was loaded from; create one under any other name. */
  async save() {
    const doc = this.document();
    const updating = this.loaded !== null && this.loaded === doc.name;
    const saved = updating ? await api.put(`/diagrams/${api.seg(doc.name)}`, { document: doc })
      : await api.post("/diagrams", { document: doc });
    this.loaded = saved.name;
    this.savedDoc = JSON.stringify(doc);
    this.baseline = this.savedDoc;
    this.setProblems([]);
    notice(this.message, `${updating ? "Updated" : "Saved"} ${saved.name}.${swapSummary(saved.swap)}`, "ok");
    await Promise.all([this.list.refresh(), this.versions.show(saved.name)]);
  }

  /** Deploy what is on the canvas: save it first when it is new or edited since it was loaded. */
  async deploy() {
    const name = this.named("deploy");
    if (!name) return;
    // The list may be older than the catalog (still loading, or another tab created the name).
    if (this.loaded !== name) await this.list.refresh();
    if (this.list.has(name) && this.loaded !== name) {
      notice(this.message, `A diagram named ${name} is stored and the canvas does not hold it: open it from Your diagrams, or name this one differently.`, "error");
      return;
    }
    if (!this.list.has(name) || this.edited()) await this.save();
    notice(this.message, `Deploying ${name}…`, "info");
    const answer = await api.post(`/diagrams/${api.seg(name)}/deploy`);
    notice(this.message, `${name} is ${answer.status}.`, "ok");
    this.rewrite.show(await api.get(`/diagrams/${api.seg(name)}`));
    await this.list.refresh();
  }

  async stop() {
    const name = this.named("stop");
    if (!name) return;
    const answer = await api.post(`/diagrams/${api.seg(name)}/stop`);
    if (name === this.loaded) {   // a stopped diagram counts nothing, and its failure is over
      this.runFault = null;
      this.canvas.showCounts({});
      this.markBoxes();
    }
    notice(this.message, `${name} is ${answer.status}.`, "ok");
    await this.list.refresh();
  }

  async remove() {
    const name = this.named("delete");
    if (!name) return;
    if (!(await confirmDanger(`Delete diagram ${name}? It stops if it runs, and its outputs and their grants go with it.`, "Delete"))) return;
    await api.del(`/diagrams/${api.seg(name)}`);
    if (this.loaded === name) {
      this.loaded = null;
      this.versions.show(null);
      this.rewrite.show(null);
    }
    notice(this.message, `Deleted ${name}.`, "ok");
    await this.list.refresh();
  }

  reset() {
    this.view("Diagram");
    this.query.edited = false;
    this.select(null);
    this.canvas.clear();
    this.runFault = null;
    this.nameInput.value = "";
    this.keepSettings({});
    this.loaded = null;
    this.versions.show(null);
    this.rewrite.show(null);
    this.savedDoc = null;
    this.history.reset(this.canvas.snapshot());
    this.setProblems([]);
    this.settle();
    notice(this.message, "");
    this.nameInput.focus();
  }

  /** A new, unsaved diagram from a template, under a name none of the user's diagrams has. */
  async fromTemplate() {
    await this.ready;
    const { streams } = await api.get("/streams");
    const free = (stem) => {
      for (let n = 1; ; n += 1) if (!this.list.has(`${stem}${n}`)) return `${stem}${n}`;
    };
    const chosen = await chooseTemplate(this.declarations, streams, free);
    if (!chosen || !(await this.mayDiscard())) return;
    this.reset();
    this.show(chosen.doc.name, chosen.doc);
    notice(this.message, `Opened the ${chosen.template.title} template as ${chosen.doc.name}; Save or Deploy stores it.`, "ok");
  }

  async load(name) {
    const diagram = await api.get(`/diagrams/${api.seg(name)}`);
    this.show(diagram.name, diagram.document || {});
    this.loaded = diagram.name;
    this.savedDoc = JSON.stringify(this.document());
    this.rewrite.show(diagram);
    notice(this.message, `Loaded ${diagram.name} (${diagram.status}).`, "ok");
    await this.versions.show(diagram.name);
  }

  /** An older version on the canvas, as an unsaved edit of the stored diagram: Save restores it. */
  openVersion(name, version, doc) {
    this.show(name, doc);
    this.loaded = name;
    notice(this.message, `Opened version ${version} of ${name}; Save stores it as the newest version.`, "ok");
  }

  /** Draw a document: each box in the column of its distance from the inputs, then fit; keep
   * its other sections (`settings`). */
  show(name, doc, settings = settingsOf(doc)) {
    this.view("Diagram");   // first: fitting measures the shown canvas
    this.query.edited = false;
    this.select(null);
    this.canvas.clear();
    this.runFault = null;
    this.setProblems([]);
    this.nameInput.value = name;
    this.keepSettings(settings);
    const nodes = fromDocument(doc, this.declarations);
    const columns = depths(nodes);
    const rows = new Map();
    this.canvas.place(nodes.map((node, i) => {
      const row = rows.get(columns[i]) || 0;
      rows.set(columns[i], row + 1);
      return { ...node, x: 40 + columns[i] * 210, y: 30 + row * 110 };
    }));
    this.canvas.fit();
    this.history.reset(this.canvas.snapshot());
    this.settle();
  }

  exportFile() {
    const doc = this.document();
    const blob = new Blob([`${JSON.stringify(doc, null, 2)}\n`], { type: "application/json" });
    const link = el("a", { href: URL.createObjectURL(blob), download: `${doc.name || "diagram"}.json` });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 0);
  }

  /** Open a document from a file; it is a new, unsaved diagram until Save. */
  async importFile() {
    const file = this.importInput.files[0];
    this.importInput.value = "";
    if (!file) return;
    let doc;
    try {
      doc = JSON.parse(await file.text());
    } catch {
      notice(this.message, `${file.name} is not a JSON diagram document.`, "error");
      return;
    }
    if (!doc || typeof doc !== "object" || Array.isArray(doc)) {
      notice(this.message, `${file.name} is not a diagram document.`, "error");
      return;
    }
    this.show(typeof doc.name === "string" ? doc.name : "", doc);
    this.loaded = null;
    this.versions.show(null);
    this.rewrite.show(null);
    this.savedDoc = null;
    notice(this.message, `Imported ${file.name}; Save stores it.`, "ok");
  }

  setProblems(problems) {
    this.problems = problems;
    clearFieldError(this.nameError, this.nameInput);
    const named = problems.filter((p) => p.path === "name").map((p) => p.message);
    if (named.length) showFieldError(this.nameError, this.nameInput, named);
    const { paths, owner } = this.problemOwners();
    this.markBoxes();
    fill(this.problemsBox, problems.length ? el("ul", {}, problems.map((p) => {
      const where = owner(p);
      return el("li", {},
        where ? el("button", { type: "button", class: "link", onclick: () => this.select(paths.get(where)) }, p.path)
          : el("code", {}, p.path || "document"),
        ": ", p.message);
    })) : null);
    this.showProperties();
  }

  /** The canvas's boxes by document path, and the path of the box a problem is about. */
  problemOwners() {
    const paths = new Map(this.canvas.nodes().map((n) => [pathOf(n), n.id]));
    const owner = (p) => [...paths.keys()].find((k) => p.path === k || p.path.startsWith(`${k}.`));
    return { paths, owner };
  }

  /** Mark each box with its validation problems and, while it holds, its diagram's failure. */
  markBoxes() {
    const { paths, owner } = this.problemOwners();
    const faults = new Map();
    const add = (id, message) => faults.set(id, [...(faults.get(id) || []), message]);
    for (const p of this.problems) if (owner(p)) add(paths.get(owner(p)), p.message);
    const failed = this.runFault && this.canvas.idOfName(this.runFault.box);
    if (failed) add(failed, this.runFault.message);
    this.canvas.mark(faults);
  }

  /**
   * A status of a running diagram, polled by the list: on the loaded diagram's boxes, their rows
   * in and out and backlog (those the server shows this session) and the failure of an output's
   * query.
   */
  showRun(name, progress) {
    if (name !== this.loaded || !this.canvas) return;
    if (progress?.state === "stopped") return;   // a status polled before a stop answered
    const withheld = Object.fromEntries((progress?.withheld || []).map((b) => [b, null]));
    this.canvas.showCounts({ ...withheld, ...(progress?.boxes || {}) },
      { waiting: progress?.backlog || {}, outputs: progress?.outputs || {} });
    const failed = progress?.state === "failed" && progress.failed_output
      ? { box: progress.failed_output, message: progress.error || "its query failed" } : null;
    if (JSON.stringify(failed) !== JSON.stringify(this.runFault)) {
      this.runFault = failed;
      this.markBoxes();
    }
  }

  showError(error) {
    const box = error.details?.box;
    const node = box && !error.problems?.length && this.canvas?.nodes().find((n) => n.name === box);
    if (node) {   // a deploy refused for one box (a rewrite it cannot take, ...)
      this.setProblems([{ code: error.code, path: pathOf(node), message: error.message }]);
      notice(this.message, error.message, "error");
    } else if (error.problems?.length) {
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
