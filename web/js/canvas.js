// The diagram canvas: Drawflow draws boxes, ports and arrows and handles dragging and
// connecting; this module keeps each box's type, name and parameters beside it and renders the
// box's face with text nodes only (Drawflow's own html argument is always left empty).
import { el, fill } from "./dom.js";
import { hasOutputPort, portsOf } from "./document.js";

const Drawflow = window.Drawflow;

export class Canvas {
  /**
   * @param container the element Drawflow draws into
   * @param declarations Map of box type -> declaration
   * @param events {select(id|null), change()}
   */
  constructor(container, declarations, events) {
    this.container = container;
    this.declarations = declarations;
    this.boxes = new Map();   // Drawflow node id (string) -> {type, name, params}
    this.editor = new Drawflow(container);
    this.editor.reroute = false;
    this.editor.start();
    this.editor.on("nodeSelected", (id) => events.select(String(id)));
    this.editor.on("nodeUnselected", () => events.select(null));
    this.editor.on("nodeRemoved", (id) => {
      this.boxes.delete(String(id));
      events.select(null);
      events.change();
    });
    this.editor.on("connectionCreated", (c) => this.onConnect(c, events));
    this.editor.on("connectionRemoved", () => events.change());
  }

  /** A port that takes one box keeps only the newest arrow, as a form field keeps one value. */
  onConnect({ output_id, input_id, output_class, input_class }, events) {
    const box = this.boxes.get(String(input_id));
    const port = portsOf(this.declarations.get(box.type))[portIndex(input_class)];
    if (port.kind !== "input refs") {
      for (const c of this.connectionsInto(input_id, input_class)) {
        if (c.node !== String(output_id)) this.editor.removeSingleConnection(c.node, input_id, c.input, input_class);
      }
    }
    events.change();
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
    fill(node.querySelector(".drawflow_content_node"),
      el("span", { class: "box-name" }, box.name), el("span", { class: "box-type" }, box.type));
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
  }

  /** Outline the boxes that have problems. */
  mark(ids) {
    for (const id of this.boxes.keys()) this.nodeElement(id).classList.toggle("has-problem", ids.has(id));
  }
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
