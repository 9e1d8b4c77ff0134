// The diagram canvas: Drawflow draws boxes, ports and arrows and handles dragging and
// connecting; this module keeps each box's type, name and parameters beside it and renders the
// box's face with text nodes only (Drawflow's own html argument is always left empty): its
// name, type, rows in and out while its diagram runs, and the messages of what is wrong with it.
// While it runs, each arrow out of an input says how many rows wait in its log, and each output
// its rows waiting and event-time lag (docs/editor.md, "Backlog").
import { el, fill } from "./dom.js";
import { hasOutputPort, portsOf } from "./document.js";

const Drawflow = window.Drawflow;

export class Canvas {
  /**
   * @param container the element Drawflow draws into
   * @param declarations Map of box type -> declaration
   * @param events {select(id|null), change(), edited() after a change worth undoing,
   *                refused(message) when an arrow is not accepted}
   */
  constructor(container, declarations, events) {
    this.container = container;
    this.declarations = declarations;
    this.events = events;
    this.boxes = new Map();   // Drawflow node id (string) -> {type, name, params}
    this.picked = new Set();  // the selected boxes: a click picks one, shift+click adds or drops
    this.quiet = false;       // true while the canvas redraws itself (restore, refused arrows)
    this.shift = false;
    this.counts = {};          // box name -> {rows_in, rows_out} of the running diagram
    this.backlog = { waiting: {}, outputs: {} };   // input -> rows waiting; output -> its lag
    this.faults = new Map();   // box id -> messages of what is wrong with it
    this.editor = new Drawflow(container);
    this.editor.reroute = false;
    this.editor.zoom_min = 0.2;
    this.editor.start();
    container.addEventListener("pointerdown", (e) => { this.shift = e.shiftKey; }, true);
    this.editor.on("nodeSelected", (id) => this.onPick(String(id)));
    this.editor.on("nodeUnselected", () => {
      if (!this.shift) this.pick([]);
      events.select(null);
    });
    this.editor.on("nodeRemoved", (id) => {
      this.boxes.delete(String(id));
      this.picked.delete(String(id));
      events.select(null);
      this.changed();
    });
    this.editor.on("nodeMoved", () => {
      this.labelArrows();
      this.changed();
    });
    this.editor.on("connectionCreated", (c) => {
      this.onConnect(c);
      this.labelArrows();
    });
    this.editor.on("connectionRemoved", () => this.changed());
  }

  /** Tell the editor something changed; unless the canvas is redrawing itself, it is undoable. */
  changed() {
    this.events.change();
    if (!this.quiet) this.events.edited();
  }

  onPick(id) {
    if (this.shift) {
      const next = new Set(this.picked);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      this.pick([...next]);
    } else {
      this.pick([id]);
    }
    this.events.select(id);
  }

  /** Mark exactly these boxes as selected. */
  pick(ids) {
    this.picked = new Set(ids.filter((id) => this.boxes.has(id)));
    for (const id of this.boxes.keys()) this.nodeElement(id).classList.toggle("picked", this.picked.has(id));
  }

  /** A port that takes one box refuses a second arrow: the user removes the first one deliberately. */
  onConnect({ output_id, input_id, output_class, input_class }) {
    const box = this.boxes.get(String(input_id));
    const port = portsOf(this.declarations.get(box.type))[portIndex(input_class)];
    const others = this.connectionsInto(input_id, input_class).filter((c) => c.node !== String(output_id));
    if (port.kind !== "input refs" && others.length && !this.quiet) {
      this.quiet = true;
      this.editor.removeSingleConnection(output_id, input_id, output_class, input_class);
      this.quiet = false;
      const from = this.boxes.get(String(others[0].node)).name;
      this.events.refused(`${box.name}'s port "${port.name}" takes one arrow and already has one from ${from}: select that arrow and press Delete first.`);
      return;
    }
    this.changed();
  }

  connectionsInto(id, inputClass) {
    return this.editor.getNodeFromId(id).inputs[inputClass].connections;
  }

  /** Add a box at canvas coordinates; returns its id. */
  add(type, name, params, x, y) {
    const decl = this.declarations.get(type);
    const inputs = portsOf(decl).length;
    const outputs = hasOutputPort(decl) ? 1 : 0;
    const id = String(this.editor.addNode(type, inputs, outputs, x, y, `box box-${cssSafe(type)}`, {}, ""));
    this.boxes.set(id, { type, name, params });
    const node = this.nodeElement(id);
    node.dataset.name = name;
    node.dataset.type = type;
    portsOf(decl).forEach((port, i) => {
      const dot = node.querySelector(`.inputs .input_${i + 1}`);
      dot.title = port.name;
      dot.dataset.port = port.name;
    });
    this.render(id);
    return id;
  }

  /** Add a box where the pointer dropped it (client coordinates). */
  addAt(type, name, params, clientX, clientY) {
    const rect = this.editor.precanvas.getBoundingClientRect();
    const zoom = this.editor.zoom;
    return this.add(type, name, params, (clientX - rect.x) / zoom, (clientY - rect.y) / zoom);
  }

  /** Add a box in the first free spot of a grid (for keyboard users and loaded documents). */
  addFree(type, name, params) {
    const taken = new Set([...this.boxes.keys()].map((id) => {
      const n = this.editor.getNodeFromId(id);
      return `${Math.round(n.pos_x / 200)},${Math.round(n.pos_y / 110)}`;
    }));
    for (let slot = 0; ; slot += 1) {
      const col = slot % 3;
      const row = Math.floor(slot / 3);
      if (!taken.has(`${col},${row}`)) return this.add(type, name, params, 40 + col * 200, 30 + row * 110);
    }
  }

  connect(fromId, toId, portNumber) {
    this.editor.addConnection(fromId, toId, "output_1", `input_${portNumber + 1}`);
  }

  nodeElement(id) {
    return this.container.querySelector(`#node-${id}`);
  }

  render(id) {
    const box = this.boxes.get(id);
    const node = this.nodeElement(id);
    node.dataset.name = box.name;
    node.setAttribute("aria-label", `${box.type} box ${box.name}`);
    const counts = this.counts[box.name];
    const lag = this.backlog.outputs[box.name];
    const faults = this.faults.get(id) || [];
    node.classList.toggle("has-problem", faults.length > 0);
    fill(node.querySelector(".drawflow_content_node"),
      el("span", { class: "box-name" }, box.name), el("span", { class: "box-type" }, box.type),
      counts ? el("span", { class: "box-metrics", title: "rows in and out since it was deployed" }, rowsText(counts))
        : counts === null ? el("span", { class: "box-metrics", title: "shown only to those who may read every stream its tuples derive from" }, "rows hidden")
        : null,
      lag && lag.rows_waiting !== null && lag.rows_waiting !== undefined
        ? el("span", { class: `box-backlog${lag.behind ? " behind" : ""}`, title: "rows its inputs' logs hold that it has yet to read, and how far the newest event time it read is behind the clock" }, lagText(lag))
        : null,
      lag?.mode ? el("span", { class: "box-mode", "data-mode": lag.mode, title: lag.mode_reason }, lag.mode) : null,
      faults.map((m) => el("span", { class: "box-fault", role: "note" }, m)));
  }

  /**
   * Rows in and out of each named box ({name: {rows_in, rows_out}}, or null: hidden from this
   * session); boxes not named show none.
   */
  showCounts(counts, backlog = { waiting: {}, outputs: {} }) {
    this.counts = counts || {};
    this.backlog = backlog;
    for (const id of this.boxes.keys()) this.render(id);
    this.labelArrows();
  }

  /** On each arrow out of an input box, the rows waiting in its log (SVG text: no markup). */
  labelArrows() {
    for (const svg of this.container.querySelectorAll("svg.connection")) {
      const from = [...svg.classList].find((c) => c.startsWith("node_out_node-"))?.slice("node_out_node-".length);
      const rows = this.backlog.waiting[this.boxes.get(from)?.name];
      let label = svg.querySelector("text.arrow-backlog");
      svg.classList.toggle("has-backlog", rows !== undefined);   // drawn above the boxes
      if (rows === undefined) {
        label?.remove();
        continue;
      }
      const path = svg.querySelector("path.main-path");
      const middle = path.getPointAtLength(path.getTotalLength() / 2);
      if (!label) {
        label = document.createElementNS("http://www.w3.org/2000/svg", "text");
        label.setAttribute("class", "arrow-backlog");
        label.setAttribute("text-anchor", "middle");
        svg.append(label);
      }
      label.setAttribute("x", middle.x);
      label.setAttribute("y", middle.y - 6);
      label.textContent = `${Number(rows).toLocaleString("en")} waiting`;
    }
  }

  get(id) {
    return this.boxes.get(id);
  }

  rename(id, name) {
    this.boxes.get(id).name = name;
    this.render(id);
  }

  remove(id) {
    this.editor.removeNodeId(`node-${id}`);
  }

  /** Every box as {id, type, name, params, refs}: refs[i] are the names feeding port i. */
  nodes() {
    return [...this.boxes.entries()].map(([id, box]) => {
      const inputs = this.editor.getNodeFromId(id).inputs;
      const refs = Object.keys(inputs).sort(byPort).map((cls) =>
        inputs[cls].connections.map((c) => this.boxes.get(String(c.node)).name));
      return { id, ...box, refs };
    });
  }

  idOfName(name) {
    return [...this.boxes.entries()].find(([, box]) => box.name === name)?.[0];
  }

  clear() {
    this.editor.clear();
    this.boxes.clear();
    this.picked.clear();
    this.faults = new Map();
    this.counts = {};
  }

  /** The boxes (all, or those with the given ids) as plain data: type, name, params, refs, x, y. */
  snapshot(ids = null) {
    const wanted = ids ? new Set(ids) : null;
    return this.nodes().filter((n) => !wanted || wanted.has(n.id)).map((n) => {
      const at = this.editor.getNodeFromId(n.id);
      return { type: n.type, name: n.name, params: structuredClone(n.params), refs: n.refs, x: at.pos_x, y: at.pos_y };
    });
  }

  /**
   * Add boxes from a snapshot, with arrows from the boxes their refs name (on the canvas or
   * among them). Quietly: the caller records one undoable step for the whole of it.
   * Returns the new boxes' ids.
   */
  place(items, dx = 0, dy = 0) {
    this.quiet = true;
    try {
      const ids = items.map((it) => this.add(it.type, it.name, structuredClone(it.params), it.x + dx, it.y + dy));
      items.forEach((it, i) => it.refs.forEach((names, port) => names.forEach((ref) => {
        const from = this.idOfName(ref);
        if (from) this.connect(from, ids[i], port);
      })));
      return ids;
    } finally {
      this.quiet = false;
    }
  }

  /** Replace everything on the canvas with a snapshot (undo, redo). */
  restore(items) {
    this.clear();
    this.place(items);
    this.events.change();
  }

  removeMany(ids) {
    this.quiet = true;
    try {
      for (const id of ids) if (this.boxes.has(id)) this.remove(id);
    } finally {
      this.quiet = false;
    }
    this.editor.node_selected = null;   // Drawflow's own Delete key must find nothing left to remove
  }

  /**
   * Zoom out (never in beyond 1) and pan so every box shows. Drawflow scales its canvas about
   * the canvas's centre, so a box at p shows at centre + zoom * (p - centre) + pan.
   */
  fit(margin = 20) {
    const ids = [...this.boxes.keys()];
    if (!ids.length) return;
    const rects = ids.map((id) => {
      const n = this.editor.getNodeFromId(id);
      const node = this.nodeElement(id);
      return { x: n.pos_x, y: n.pos_y, r: n.pos_x + node.offsetWidth, b: n.pos_y + node.offsetHeight };
    });
    const left = Math.min(...rects.map((r) => r.x)) - 10;    // the input ports stick out
    const top = Math.min(...rects.map((r) => r.y));
    const right = Math.max(...rects.map((r) => r.r)) + 10;
    const bottom = Math.max(...rects.map((r) => r.b));
    const width = this.container.clientWidth;
    const height = this.container.clientHeight;
    const zoom = Math.min(1, (width - 2 * margin) / (right - left), (height - 2 * margin) / (bottom - top));
    const ed = this.editor;
    ed.zoom = zoom;
    ed.zoom_last_value = zoom;
    ed.canvas_x = margin - width / 2 - zoom * (left - width / 2);
    ed.canvas_y = margin - height / 2 - zoom * (top - height / 2);
    ed.precanvas.style.transform = `translate(${ed.canvas_x}px, ${ed.canvas_y}px) scale(${zoom})`;
  }

  /** Outline the boxes that have problems, each with its messages (Map id -> [message]). */
  mark(faults) {
    this.faults = faults;
    for (const id of this.boxes.keys()) this.render(id);
  }
}

function rowsText({ rows_in: rowsIn, rows_out: rowsOut }) {
  const n = (v) => Number(v).toLocaleString("en");
  return rowsIn === null || rowsIn === undefined ? `out ${n(rowsOut)}` : `in ${n(rowsIn)} · out ${n(rowsOut)}`;
}

function lagText({ rows_waiting: rows, event_lag_seconds: lag }) {
  const waiting = `${Number(rows).toLocaleString("en")} waiting`;
  return lag === null || lag === undefined ? waiting : `${waiting} · lag ${lag.toLocaleString("en")} s`;
}

function portIndex(inputClass) {
  return Number(inputClass.split("_")[1]) - 1;
}

function byPort(a, b) {
  return portIndex(a) - portIndex(b);
}

function cssSafe(text) {
  return text.replace(/[^A-Za-z0-9_-]/g, "_");
}
